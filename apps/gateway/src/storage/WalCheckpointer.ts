import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What one checkpoint found: frames in the WAL, and how many of them are now in the database. */
export interface CheckpointResult {
  logFrames: number;
  checkpointedFrames: number;
}

/**
 * The worker's whole program: its own connection to the same file, one PASSIVE checkpoint per
 * message. Plain CommonJS evaluated as a string, so the worker needs no TypeScript loader
 * whatever runs the gateway (tsx, vitest, a build).
 */
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
parentPort.on('message', () => {
  const [result] = db.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage({ logFrames: result.log, checkpointedFrames: result.checkpointed });
});
`;

/**
 * Checkpoints a WAL database from a worker thread. SQLite's own checkpoint runs in the connection
 * that commits, synchronously, with two fsyncs: every ~300 appends the gateway's event loop
 * stood still for 3–7 ms (docs/bench-history.md, the twelfth round). A PASSIVE checkpoint from another
 * connection copies pages while the gateway keeps committing; it never blocks a writer.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private inFlight = false;
  private failed = false;

  /**
   * @param onResult each checkpoint's outcome, on the gateway's thread.
   * @param onFailure the worker is gone (it could not open the file, say): checkpoint in process again.
   */
  constructor(file: string, onResult: (result: CheckpointResult) => void, onFailure: (error: Error) => void) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(workerSource, { eval: true, workerData: { file, driver } });
    this.worker.on('message', (result: CheckpointResult) => {
      this.inFlight = false;
      onResult(result);
    });
    const fail = (error: Error) => {
      if (this.failed) return;
      this.failed = true;
      onFailure(error);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the WAL checkpointer exited (${code})`)));
    // A checkpointer never keeps the process alive: the gateway decides when it exits. (After
    // the listeners: adding one refs the worker again.)
    this.worker.unref();
  }

  /** Starts a checkpoint; false (nothing asked) while one runs or once the worker is gone. */
  request(): boolean {
    if (this.failed || this.inFlight) return false;
    this.inFlight = true;
    this.worker.postMessage(null);
    return true;
  }

  close(): void {
    this.failed = true;
    void this.worker.terminate();
  }
}
