/* eslint-disable @typescript-eslint/no-explicit-any -- handler parameters are `any` so that the
   browser's, ws's and the test-kit's differently typed event objects all fit. */
/** The part of the browser WebSocket the client uses; `ws` and the test-kit pair fit it. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
  send(data: any): void;
  close(code?: number, reason?: string): void;
}

export const OPEN = 1;

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

export const defaultTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => globalThis.performance.now(),
};
