import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from './SqliteStore';
import { WalCheckpointer } from './WalCheckpointer';

const dir = mkdtempSync(join(tmpdir(), 'flint-wal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sizeOf = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};
const turnOfTheLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SqliteStore on disk: WAL checkpoints', () => {
  it('copies the WAL into the database from another thread, keeps the WAL bounded under writes that never pause, and loses nothing', async () => {
    const file = join(dir, 'busy.sqlite');
    const store = new SqliteStore(file);
    const appends = 40_000;
    let largestWalBytes = 0;
    for (let i = 0; i < appends; i++) {
      const update = new Uint8Array(150).fill(i % 251);
      update[0] = i & 0xff;
      update[1] = i >> 8;
      store.appendUpdate('w1/doc', update);
      // The gateway's loop turns between flushes; this is the least it would.
      if (i % 50 === 49) {
        await turnOfTheLoop();
        largestWalBytes = Math.max(largestWalBytes, sizeOf(`${file}-wal`));
      }
    }
    // ~3 pages an append: 40,000 appends never checkpointed leave ~500 MB of WAL and the rows
    // only there; checkpointed only PASSIVE, which never catches up with this writer, ~170 MB.
    // With the restart: ~32 MB (its bound) plus what came while the last checkpoint ran.
    expect(sizeOf(file)).toBeGreaterThan(appends * 150);
    expect(largestWalBytes).toBeLessThan(128 * 1024 * 1024);
    store.close();

    const reopened = new SqliteStore(file);
    const { updates } = reopened.loadDoc('w1/doc');
    expect(updates).toHaveLength(appends);
    updates.forEach((update, i) => expect(update[0]! | (update[1]! << 8)).toBe(i));
    reopened.close();
  });

  it('a store closed while its checkpointer works can be opened again at once', async () => {
    const file = join(dir, 'closing.sqlite');
    for (let round = 0; round < 3; round++) {
      const store = new SqliteStore(file);
      for (let i = 0; i < 600; i++) store.appendUpdate('w1/doc', new Uint8Array(100).fill(round));
      await turnOfTheLoop();
      store.close();
    }
    const store = new SqliteStore(file);
    expect(store.loadDoc('w1/doc').updates).toHaveLength(1_800);
    store.close();
  });
});

describe('WalCheckpointer', () => {
  it('reports a worker that cannot open its file, so the store can checkpoint in process again', async () => {
    const failure = await new Promise<Error>((resolve) => {
      const checkpointer = new WalCheckpointer(join(dir, 'no-such-folder', 'f.sqlite'), () => undefined, resolve);
      checkpointer.request();
    });
    expect(failure).toBeInstanceOf(Error);
  });
});
