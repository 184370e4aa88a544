import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { createDatabase, startPostgres } from '@flint/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { PostgresStore, PostgresStoreError } from './PostgresStore';

// What every Store does is in Store.contract.test.ts; this file is what only a shared database
// asks for: several gateways on one document, and a server that goes away.

const postgres = await startPostgres();
const opened: PostgresStore[] = [];
let databases = 0;
afterAll(async () => {
  for (const store of opened) store.close();
  await postgres.stop();
});

/** A fresh database, and a way to open gateways' stores on it. */
function database(): { url: string; open: () => PostgresStore } {
  const url = createDatabase(postgres, `postgres_store_${++databases}`);
  const open = () => {
    const store = new PostgresStore(url);
    opened.push(store);
    return store;
  };
  return { url, open };
}

/** One gateway's copy of a document: its edits, each the update it would append. */
function replica(clientId: number) {
  const doc = new Y.Doc();
  doc.clientID = clientId;
  let last: Uint8Array = new Uint8Array();
  doc.on('update', (update: Uint8Array) => (last = update));
  return {
    doc,
    edit(name: string, value: string): Uint8Array {
      const text = doc.getText(name);
      text.insert(text.length, value);
      return last;
    },
  };
}

/** The document the stored updates make, checked to be whole (nothing left pending). */
function load(store: PostgresStore, docKey: string): Y.Doc {
  const doc = new Y.Doc();
  for (const update of store.loadDoc(docKey).updates) Y.applyUpdate(doc, update);
  expect(doc.store.pendingStructs).toBeNull();
  expect(doc.store.pendingDs).toBeNull();
  return doc;
}

function textOf(update: Uint8Array): string {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, update);
  return doc.getText('t').toString();
}

describe('PostgresStore shared by several gateways', () => {
  it('a compaction keeps what another gateway appended and this one never received', async () => {
    const { open } = database();
    const [a, b] = [open(), open()];
    const [ra, rb] = [replica(1), replica(2)];
    const fromA = ra.edit('t', 'written on A. ');
    const fromB = rb.edit('t', 'written on B.');
    a.appendUpdate('w1/d', fromA);
    await b.appendUpdate('w1/d', fromB); // stored on B's connection; A never received it

    a.compactDoc('w1/d', Y.encodeStateAsUpdate(ra.doc));

    expect(a.loadDoc('w1/d').updates).toHaveLength(1);
    const both = new Y.Doc();
    Y.applyUpdate(both, fromA);
    Y.applyUpdate(both, fromB);
    const text = load(b, 'w1/d').getText('t').toString();
    expect(text).toBe(both.getText('t').toString());
    expect(text).toContain('written on A. ');
    expect(text).toContain('written on B.');
  });

  it('setting updates aside keeps what another gateway appended meanwhile', async () => {
    const { open } = database();
    const [a, b] = [open(), open()];
    const [ra, rb] = [replica(1), replica(2)];
    const unreadable = new Uint8Array([6, 6]);
    a.appendUpdate('w1/d', ra.edit('t', 'kept'));
    a.appendUpdate('w1/d', unreadable);
    await b.appendUpdate('w1/d', rb.edit('u', 'appended on B'));

    a.setAsideUpdates('w1/d', [unreadable], 'not a Yjs update', Y.encodeStateAsUpdate(ra.doc), 42);

    const doc = load(b, 'w1/d');
    expect(doc.getText('t').toString()).toBe('kept');
    expect(doc.getText('u').toString()).toBe('appended on B');
    expect(b.listSetAside('w1/d')).toEqual([{ data: unreadable, reason: 'not a Yjs update', at: 42 }]);
  });

  it('a compaction leaves a stored update it cannot read where it is, for the next load to set aside', () => {
    const { open } = database();
    const store = open();
    const r = replica(1);
    const unreadable = new Uint8Array([6, 6]);
    store.appendUpdate('w1/d', r.edit('t', 'ab'));
    store.appendUpdate('w1/d', unreadable);
    store.appendUpdate('w1/d', r.edit('t', 'cd'));

    store.compactDoc('w1/d', Y.encodeStateAsUpdate(r.doc));

    const { updates } = store.loadDoc('w1/d');
    expect(updates).toHaveLength(2);
    expect(updates[0]).toEqual(unreadable);
    expect(textOf(updates[1]!)).toBe('abcd');
  });

  it('gateways compacting one document at the same time as others append to it lose nothing', async () => {
    const { url, open } = database();
    const a = open();
    // Gateway B is another process doing what A does; two more connections only append, from a
    // worker: an append can then commit between a compaction's read and its delete.
    const gatewayB = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', gatewaySource], {
      env: { ...process.env, FLINT_DATABASE_URL: url, STORE_MODULE: new URL('./PostgresStore.ts', import.meta.url).href },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const gatewayBExit = new Promise<number | null>((resolve) => gatewayB.once('exit', resolve));
    const [rc, rd] = [replica(3), replica(4)];
    const appends = [rc, rd].map((r, i) => Array.from({ length: 200 }, (_, n) => r.edit(`t${i}`, `${n},`)));
    const done = new Int32Array(new SharedArrayBuffer(8));
    const appender = new Worker(appenderSource, {
      eval: true,
      workerData: { url, appends, done: done.buffer, pg: createRequire(import.meta.url).resolve('pg') },
    });
    const ra = replica(1);
    let compactions = 0;
    const startedMs = performance.now();
    while ((gatewayB.exitCode === null || Atomics.load(done, 0) < 2) && Atomics.load(done, 1) === 0 && performance.now() - startedMs < 15_000) {
      a.appendUpdate('w1/d', ra.edit('a', `${compactions},`));
      a.compactDoc('w1/d', Y.encodeStateAsUpdate(ra.doc));
      compactions++;
      await new Promise((resolve) => setImmediate(resolve)); // lets B's exit be heard
    }
    void appender.terminate();
    expect(await gatewayBExit, 'gateway B failed').toBe(0);
    expect(Atomics.load(done, 1), 'the appender failed').toBe(0);
    expect(Atomics.load(done, 0)).toBe(2);

    const doc = load(a, 'w1/d');
    expect(doc.getText('a').toString()).toBe(ra.doc.getText('a').toString());
    expect(doc.getText('b').toString()).toBe(Array.from({ length: gatewayBEdits }, (_, n) => `${n},`).join(''));
    expect(doc.getText('t0').toString()).toBe(rc.doc.getText('t0').toString());
    expect(doc.getText('t1').toString()).toBe(rd.doc.getText('t1').toString());
    console.log(`A compacted ${compactions} times while B made ${gatewayBEdits} edits and compactions and 400 updates were appended`);
  });
});

const gatewayBEdits = 150;
/** Gateway B: its own copy of the document, appending each edit and compacting after it. */
const gatewaySource = `
const { PostgresStore } = await import(process.env.STORE_MODULE);
const Y = await import('yjs');
const store = new PostgresStore(process.env.FLINT_DATABASE_URL);
const doc = new Y.Doc();
doc.clientID = 2;
doc.on('update', (update) => store.appendUpdate('w1/d', update));
for (let n = 0; n < ${gatewayBEdits}; n++) {
  doc.getText('b').insert(doc.getText('b').length, n + ',');
  store.compactDoc('w1/d', Y.encodeStateAsUpdate(doc));
}
store.close();
`;

/**
 * Two connections appending their documents' updates in order; counts in done[0], failures in
 * done[1]. The second one's commits are slow (a stalled disk, say): its row takes its seq, then
 * rows with higher seqs commit, then it does.
 */
const appenderSource = `
const { workerData } = require('node:worker_threads');
const { Client } = require(workerData.pg);
const done = new Int32Array(workerData.done);
async function append(updates, slowCommit) {
  const client = new Client({ connectionString: workerData.url });
  await client.connect();
  for (const update of updates) {
    if (slowCommit) await client.query('BEGIN');
    await client.query('INSERT INTO doc_updates (doc_key, data) VALUES ($1, $2)', ['w1/d', update]);
    if (slowCommit) await client.query('SELECT pg_sleep(0.002)');
    if (slowCommit) await client.query('COMMIT');
  }
  await client.end();
  Atomics.add(done, 0, 1);
}
for (const [i, updates] of workerData.appends.entries()) {
  append(updates, i === 1).catch((error) => {
    console.error('appender:', error);
    Atomics.store(done, 1, 1);
  });
}
`;

describe('PostgresStore when PostgreSQL is gone', () => {
  it('a call to a stopped server throws an error naming the call, without waiting out the timeout', async () => {
    const server = await startPostgres();
    const store = new PostgresStore(server.url, { timeoutMs: 3_000 });
    await store.appendUpdate('w1/d', new Uint8Array([1]));
    await server.stop();

    // An append does not block: it rejects once the worker finds the server gone.
    // 'failed', not 'timeout': a refused connection is reported as such, not waited out.
    const error = await store.appendUpdate('w1/d', new Uint8Array([2])).then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(PostgresStoreError);
    expect(error).toMatchObject({ op: 'appendUpdate', reason: 'failed' });
    expect((error as Error).message).toContain('PostgresStore.appendUpdate failed');
    // A blocking call fails the same way.
    const read = catchError(() => store.loadDoc('w1/d'));
    expect(read).toMatchObject({ op: 'loadDoc', reason: 'failed' });
    expect(() => store.close()).not.toThrow();
  });

  it('a server that never answers makes the call throw once its timeout has passed', async () => {
    // Accepts connections (the kernel does, while this thread is blocked) and never says a word.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const startedMs = performance.now();
      const error = catchError(() => new PostgresStore(`postgres://flint@127.0.0.1:${port}/flint`, { timeoutMs: 500 }));
      const elapsedMs = performance.now() - startedMs;
      expect(error).toMatchObject({ op: 'open', reason: 'timeout' });
      expect(error.message).toContain(`127.0.0.1:${port}/flint within 500 ms`);
      expect(elapsedMs).toBeGreaterThanOrEqual(500); // it waited for the server; vitest's own timeout catches a hang
    } finally {
      silent.close();
    }
  });
});

it('measures appends (printed for the decision record, not asserted)', async () => {
  const store = database().open();
  const update = new Uint8Array(50).fill(7);
  const appends = 2_000;
  await Promise.all(Array.from({ length: 100 }, () => store.appendUpdate('w1/warm-up', update)));
  // One at a time (each waits for the last: a keystroke's round trip) …
  let startedMs = performance.now();
  for (let i = 0; i < appends; i++) await store.appendUpdate('w1/one', update);
  const oneUs = ((performance.now() - startedMs) * 1000) / appends;
  // … and back to back, as a streaming agent posts them (they share statements and commits).
  startedMs = performance.now();
  const posted = Array.from({ length: appends }, () => store.appendUpdate('w1/many', update));
  const postUs = ((performance.now() - startedMs) * 1000) / appends;
  await Promise.all(posted);
  const manyUs = ((performance.now() - startedMs) * 1000) / appends;
  expect(store.loadDoc('w1/one').updates).toHaveLength(appends);
  expect(store.loadDoc('w1/many').updates).toHaveLength(appends);
  console.log(
    `PostgresStore.appendUpdate, ${update.byteLength} bytes: ${oneUs.toFixed(0)} µs each one at a time; back to back ${postUs.toFixed(1)} µs to post, ${manyUs.toFixed(1)} µs each until stored`,
  );
});

function catchError(call: () => unknown): PostgresStoreError {
  try {
    call();
  } catch (error) {
    if (error instanceof PostgresStoreError) return error;
    throw error;
  }
  throw new Error('expected the call to throw');
}
