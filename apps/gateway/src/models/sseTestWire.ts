/** Raw HTTP/1.1 SSE answers for the client's tests (SseStream.test, tls.test): what a server writes. */
import type net from 'node:net';

export const sse = (data: string): string => `data: ${data}\n\n`;
export const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
export const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';

/** The events `t0`…`t{count-1}`, one write each, a turn of the event loop apart; then the body's end. */
export function writeSpaced(socket: net.Socket, count: number, done: () => void): void {
  let i = 0;
  const next = () => {
    socket.write(chunk(sse(`t${i}`)));
    if (++i < count) setImmediate(next);
    else socket.write('0\r\n\r\n', done);
  };
  next();
}
