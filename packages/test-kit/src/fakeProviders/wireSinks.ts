/**
 * The two ways the fake server frames wire events: SSE over an HTTP response (optionally cut into
 * tiny socket writes) and JSON messages over a WebSocket.
 */
import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import type { FakeScript } from './FakeScript';
import { chatCompletionErrorChunk, responsesFailedEvent, type WireEvent } from './WireEvent';
import type { WireSink } from './playWire';

function closedPromise(emitter: { once(event: 'close', listener: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => emitter.once('close', () => resolve()));
}

export function sseSink(res: ServerResponse, script: FakeScript, api: 'chat' | 'responses', responseId: string): WireSink {
  const eol = script.lineEnding ?? '\n';
  const split = script.splitEveryBytes ?? 0;
  let closed = false;
  const closedSignal = closedPromise(res).then(() => {
    closed = true;
  });
  let carry = Buffer.alloc(0);

  // Resolves once the bytes reached the kernel, so a scripted disconnect right after cannot
  // discard them.
  function write(bytes: Buffer): Promise<void> {
    if (closed || res.destroyed) return Promise.resolve();
    return Promise.race([new Promise<void>((resolve) => res.write(bytes, () => resolve())), closedSignal]);
  }

  async function emit(text: string): Promise<void> {
    if (split <= 0) return write(Buffer.from(text, 'utf8'));
    carry = Buffer.concat([carry, Buffer.from(text, 'utf8')]);
    while (carry.length >= split) {
      await write(carry.subarray(0, split));
      carry = carry.subarray(split);
      // A turn of the event loop between writes, so they leave as separate TCP segments.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  function frame(event: WireEvent): string {
    const ping = script.keepAliveComments ? `: ping${eol}` : '';
    const data = typeof event.payload === 'string' ? event.payload : JSON.stringify(event.payload);
    const name = event.name ? `event: ${event.name}${eol}` : '';
    return `${ping}${name}data: ${data}${eol}${eol}`;
  }

  return {
    send: (event) => emit(frame(event)),
    sendGarbage: () => emit(`data: {"choices": [{"delta": {"content": "oops"${eol}${eol}`),
    sendFailure: (code, message) =>
      emit(frame(api === 'chat' ? chatCompletionErrorChunk(code, message) : responsesFailedEvent(responseId, code, message))),
    flush: async () => {
      if (carry.length > 0) await write(carry);
      carry = Buffer.alloc(0);
    },
    disconnect: () => res.socket?.destroy(),
    closed: closedSignal,
    isClosed: () => closed,
  };
}

/**
 * One close watcher per socket, shared by every response on it: a persistent connection serves
 * many turns, and a listener per turn would pile up on it.
 */
const socketClosed = new WeakMap<WebSocket, { signal: Promise<void>; closed: () => boolean }>();

function watchClose(ws: WebSocket): { signal: Promise<void>; closed: () => boolean } {
  let watch = socketClosed.get(ws);
  if (!watch) {
    let closed = ws.readyState !== ws.OPEN;
    const signal = closed
      ? Promise.resolve()
      : closedPromise(ws).then(() => {
          closed = true;
        });
    watch = { signal, closed: () => closed };
    socketClosed.set(ws, watch);
  }
  return watch;
}

export function webSocketSink(ws: WebSocket, responseId: string): WireSink {
  const { signal: closedSignal, closed: isClosed } = watchClose(ws);
  const send = (text: string): Promise<void> =>
    new Promise((resolve) => {
      if (isClosed() || ws.readyState !== ws.OPEN) return resolve();
      // The callback fires once the frame is handed to the socket: pacing stays honest.
      ws.send(text, () => resolve());
    });
  return {
    send: (event) => send(JSON.stringify(event.payload)),
    sendGarbage: () => send('{"type": "response.output_text.delta", "delta": "oo'),
    sendFailure: (code, message) => send(JSON.stringify(responsesFailedEvent(responseId, code, message).payload)),
    flush: async () => undefined,
    disconnect: () => ws.terminate(),
    closed: closedSignal,
    isClosed,
  };
}
