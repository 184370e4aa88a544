import { Worker } from 'node:worker_threads';

/**
 * A terminal's screen and scrollback (`@xterm/headless` + `@xterm/addon-serialize`) in a worker
 * thread of its own (screenWorker.mjs). Messages are handled in order, so `screenAt` answers with
 * the screen after exactly the writes sent before it.
 */
export class TerminalScreen {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, (screen: string) => void>();
  private nextId = 0;
  private disposed = false;

  constructor(cols: number, rows: number, scrollback: number, onParsed: (chars: number) => void) {
    this.worker = new Worker(new URL('./screenWorker.mjs', import.meta.url), { workerData: { cols, rows, scrollback } });
    // Terminals end with the gateway; a screen alone never keeps the process alive.
    this.worker.unref();
    this.worker.on('message', (message: { type: 'parsed'; chars: number } | { type: 'screen'; id: number; data: string }) => {
      if (message.type === 'parsed') return onParsed(message.chars);
      const callback = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      callback?.(message.data);
    });
    this.worker.on('error', (error) => {
      // A screen that failed loses late joiners their catch-up, not the terminal: say so once.
      console.error(JSON.stringify({ level: 'error', message: "a terminal's screen worker failed", error: String(error) }));
    });
  }

  write(data: string): void {
    if (!this.disposed) this.worker.postMessage({ type: 'write', data });
  }

  resize(cols: number, rows: number): void {
    if (!this.disposed) this.worker.postMessage({ type: 'resize', cols, rows });
  }

  /** The serialized screen after every write sent so far. */
  screenAt(callback: (screen: string) => void): void {
    if (this.disposed) return;
    const id = this.nextId++;
    this.waiting.set(id, callback);
    this.worker.postMessage({ type: 'screen', id });
  }

  /** After every write sent so far has been parsed. */
  settled(callback: () => void): void {
    this.screenAt(() => callback());
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.waiting.clear();
    void this.worker.terminate();
  }
}
