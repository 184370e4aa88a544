/**
 * Plays a list of wire events into a sink (an SSE response or a WebSocket), pacing them,
 * injecting the script's mid-stream fault at its position and pausing at its hold.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { FakeScript } from './FakeScript';
import type { WireEvent } from './WireEvent';

export interface WireSink {
  send(event: WireEvent): Promise<void>;
  /** Something that is not JSON where an event should be. */
  sendGarbage(): Promise<void>;
  /** The in-band failure event of this API. */
  sendFailure(code: string, message: string): Promise<void>;
  /** Writes anything buffered (split writes keep a carry). */
  flush(): Promise<void>;
  /** Cuts the connection abruptly. */
  disconnect(): void;
  /** Resolves once the peer (or the server's shutdown) closed the connection. */
  closed: Promise<void>;
  isClosed(): boolean;
}

export type PlayOutcome = 'completed' | 'client-closed' | 'fault';

/**
 * `hold`: called at the script's `holdAfterChunks`, with the sink's close; playing goes on once
 * the promise it returns settles.
 */
export async function playWire(
  events: WireEvent[],
  script: FakeScript,
  sink: WireSink,
  hold: (closed: Promise<void>) => Promise<void> = () => Promise.resolve(),
): Promise<PlayOutcome> {
  const fault = script.fault && script.fault.kind !== 'status' ? script.fault : null;
  const delayMs = script.delayMs ?? (script.tokensPerSecond ? 1_000 / script.tokensPerSecond : 0);
  let textSent = 0;
  for (const event of events) {
    if (sink.isClosed()) return 'client-closed';
    if (fault && textSent === fault.afterChunks) {
      switch (fault.kind) {
        case 'disconnect':
          await sink.flush();
          sink.disconnect();
          return 'fault';
        case 'stall':
          await sink.flush();
          await sink.closed;
          return 'client-closed';
        case 'failed':
          await sink.sendFailure(fault.code, fault.message ?? 'The model failed to generate a response.');
          await sink.flush();
          return 'fault';
        case 'garbage':
          await sink.sendGarbage();
          await sink.flush();
          // Keep going: the client must stop reading on its own.
          textSent = -1;
          break;
      }
    }
    if (event.isText && delayMs > 0 && textSent > 0) {
      await sink.flush();
      await Promise.race([delay(delayMs), sink.closed]);
      if (sink.isClosed()) return 'client-closed';
    }
    // Held before the delta leaves: the client may read it before `send` returns.
    const held = event.isText && textSent + 1 === script.holdAfterChunks ? hold(sink.closed) : null;
    await sink.send(event);
    if (event.isText && textSent >= 0) textSent++;
    if (held) {
      await sink.flush();
      await held;
    }
  }
  await sink.flush();
  return sink.isClosed() ? 'client-closed' : 'completed';
}
