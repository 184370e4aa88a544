/**
 * The control pages' token source: the bench's raw `ws` relay (bench/servers/relayServer.ts),
 * one WebSocket message per model token, `{"done":true}` at the end. Markers are found in the
 * received text across message boundaries and reported to the probe the benchmark injected.
 */
import { markerPattern } from './markers';

interface Probe {
  present(markers: number[]): void;
}

declare global {
  interface Window {
    __benchProbe?: Probe;
    /** Set by the page: starts one stream of `tokens` tokens; resolves when it ends. */
    __benchStart?: (tokens: number) => Promise<void>;
  }
}

export function params(): { relay: string; lines: number } {
  const query = new URLSearchParams(location.search);
  return { relay: query.get('relay') ?? '', lines: Number(query.get('lines') ?? '400') };
}

/** Streams tokens from the relay into `onToken`; reports markers once each is complete. */
export function streamFromRelay(relayUrl: string, tokens: number, onToken: (text: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(relayUrl);
    let tail = '';
    socket.onopen = () => socket.send(JSON.stringify({ tokens }));
    socket.onerror = () => reject(new Error('relay socket failed'));
    socket.onmessage = (event) => {
      const text = String(event.data);
      if (text === '{"done":true}') {
        socket.close();
        resolve();
        return;
      }
      onToken(text);
      // A marker can span messages: scan the last few characters of before plus this one.
      const window = tail + text;
      const found: number[] = [];
      for (const match of window.matchAll(markerPattern)) if (match.index + match[0].length > tail.length) found.push(Number(match[1]));
      if (found.length > 0) globalThis.window.__benchProbe?.present(found);
      tail = window.slice(-6);
    };
  });
}
