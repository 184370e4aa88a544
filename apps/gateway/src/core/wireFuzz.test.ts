import type { FlintClient } from '@flint/client';
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, type IndexEntry, type Role } from '@flint/protocol';
import { hostileFrame, int, pick, propertyConfig, seededRandom, type FuzzTarget, type MemorySocketPair } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { SqliteStore } from '../storage/SqliteStore';
import { fileIdOf, Harness, hello, syncStep1Frame, textOf } from '../../test/testHarness';

/**
 * The wire fuzzer: sessions of every role send random, truncated, bit-flipped and mutated
 * frames — above all valid Yjs and awareness updates mutated at the byte and struct level —
 * while an honest pair edits the same files. After every batch it checks what must hold, not
 * just "no crash". `npm test` runs a short seeded pass; `npm run soak` runs FUZZ_FRAMES=1000000.
 * A failure prints its seed: `SEED=<seed> npx vitest run apps/gateway/src/core/wireFuzz.test.ts`.
 */
const frames = Number(process.env.FUZZ_FRAMES ?? 50_000);
const batch = 500;
const framesPerRoom = 5_000;

describe('wire fuzzer', () => {
  it(`survives ${frames} hostile frames: the honest pair converges, every doc loads and replays, nothing is held`, () => {
    const { seed } = propertyConfig(1);
    const random = seededRandom(seed);
    let sessions = 0;
    const metrics = new Map<string, number>();
    const heapMiB: number[] = [];
    for (let round = 0; round * framesPerRoom < frames; round++) {
      const room = fuzzRoom(random, `seed ${seed}, room ${round}`, Math.min(framesPerRoom, frames - round * framesPerRoom));
      sessions += room.sessions;
      for (const [name, value] of room.outcomes) metrics.set(name, (metrics.get(name) ?? 0) + value);
      heapMiB.push(heapAfterGc());
    }
    const outcomes = [...metrics].map(([name, value]) => `${name} ${value}`).join('\n');
    const heap = `heap after the first room ${heapMiB[0]?.toFixed(1)} MiB, after the last ${heapMiB.at(-1)?.toFixed(1)} MiB, most ${Math.max(...heapMiB).toFixed(1)} MiB`;
    console.log(`wire fuzzer: seed ${seed}, ${frames} frames over ${sessions} sessions; ${heap}\n${outcomes}`);
  }, Math.max(600_000, frames * 5));
});

/** The heap once garbage is collected (the soak exposes `gc`); a rough figure without it. */
function heapAfterGc(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/**
 * One workspace under fire: a fresh one every `framesPerRoom` frames keeps the documents (and
 * so each new session's catch-up) small enough for the run to stay linear.
 */
function fuzzRoom(random: () => number, label: string, frames: number): { sessions: number; outcomes: Map<string, number> } {
  {
    const seed = label;
    const store = new SqliteStore(':memory:');
    // Real limits, but a clock that moves 4 ms a frame, so the rate limit rarely decides.
    const h = new Harness(store);
    const ws = h.gateway.createWorkspace('Fuzz', { 'honest.ts': 'export const honest = 1;\n', 'f/a.ts': 'const a = 1;\n', 'f/b.ts': 'let b = "b";\n' });
    const links: Record<Role, string> = {
      owner: ws.owner.token,
      editor: h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null).token,
      viewer: h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null).token,
    };
    const alice = h.client(ws.workspaceId, links.owner);
    const bob = h.client(ws.workspaceId, links.editor);
    h.flush();
    const honestId = fileIdOf(alice, 'honest.ts');
    const aliceText = textOf(alice, honestId);
    const bobText = textOf(bob, honestId);
    h.flush();
    const targetIds = [honestId, fileIdOf(alice, 'f/a.ts'), fileIdOf(alice, 'f/b.ts')];
    const targets: FuzzTarget[] = targetIds.map((docId) => ({ docId, doc: new Y.Doc() }));
    const refreshTargets = () => {
      for (const target of targets) {
        const live = h.gateway.document(ws.workspaceId, target.docId);
        if (live) Y.applyUpdate(target.doc, Y.encodeStateAsUpdate(live, Y.encodeStateVector(target.doc)));
      }
    };
    refreshTargets();
    // Built once: a Y.Doc costs a millisecond to make, which would be most of the run.
    const step1Frames = targets.map((target) => syncStep1Frame(target.docId, target.doc));

    const resetTargets = () => {
      for (const target of targets) {
        target.doc.destroy();
        target.doc = new Y.Doc();
        Y.applyUpdate(target.doc, Y.encodeStateAsUpdate(h.gateway.document(ws.workspaceId, target.docId)!));
      }
    };
    /**
     * The next frame. An attacker's copy that kept refused edits and then took the gateway's
     * (other structs under the same client ids) can break inside Yjs: the attacker's problem,
     * so it starts again from the gateway's state.
     */
    const nextFrame = (): Uint8Array => {
      try {
        return hostileFrame(random, targets);
      } catch {
        resetTargets();
        return hostileFrame(random, targets);
      }
    };
    let session: MemorySocketPair | null = null;
    let sessions = 0;
    const openSession = () => {
      const pair = h.openRaw();
      hello(pair, ws.workspaceId, links[pick(random, ['owner', 'editor', 'viewer'] as const)]);
      for (const frame of step1Frames) pair.client.send(frame);
      // A third of the sessions start from the gateway's state (their edits apply); the others go on
      // from the last attacker's copy, refused edits and all (theirs build on what is missing).
      if (random() < 0.3) resetTargets();
      const clientId = 1 + int(random, 2 ** 30);
      for (const target of targets) target.doc.clientID = clientId;
      sessions++;
      return pair;
    };

    const check = (sent: number) => {
      const context = `${seed}, after ${sent} frames`;
      // The honest pair keeps converging.
      aliceText.insert(int(random, aliceText.length + 1), `a${sent}`);
      bobText.insert(int(random, bobText.length + 1), `b${sent}`);
      h.flush();
      expect(alice.status.kind, context).toBe('open');
      expect(bob.status.kind, context).toBe('open');
      expect(bobText.toString(), context).toBe(aliceText.toString());
      expect(aliceText.toString(), context).toContain(`a${sent}`);
      // A fresh client loads every document whole, and the store replays to the same text.
      const reader: FlintClient = h.client(ws.workspaceId, links.viewer);
      h.flush();
      const entries = reader.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY);
      for (const [path, entry] of entries) {
        if (entry.kind !== 'file') continue;
        const live = h.gateway.document(ws.workspaceId, entry.fileId)!;
        expect(live.store.pendingStructs, `${context}: ${path} holds pending structs`).toBeNull();
        expect(live.store.pendingDs, `${context}: ${path} holds a pending delete set`).toBeNull();
        const seen = textOf(reader, entry.fileId);
        h.flush();
        expect(seen.toString(), `${context}: ${path} as a fresh client loads it`).toBe(live.getText(FILE_TEXT_KEY).toString());
        const replay = new Y.Doc();
        for (const update of store.loadDoc(`${ws.workspaceId}/${entry.fileId}`).updates) Y.applyUpdate(replay, update);
        expect(replay.getText(FILE_TEXT_KEY).toString(), `${context}: ${path} replayed from the store`).toBe(live.getText(FILE_TEXT_KEY).toString());
        expect(replay.store.pendingStructs, context).toBeNull();
        reader.closeDoc(entry.fileId);
      }
      expect(alice.faultCount + bob.faultCount + reader.faultCount, `${context}: a client could not apply what it got`).toBe(0);
      reader.destroy();
      h.flush();
      refreshTargets();
    };

    let sent = 0;
    while (sent < frames) {
      for (let i = 0; i < batch; i++, sent++) {
        if (!session || session.isClosed) {
          h.net.forgetClosed();
          session = openSession();
        }
        session.client.send(nextFrame());
        h.clock.advance(4);
        h.flush();
      }
      check(sent);
    }
    // Everyone hostile leaves: what they held goes with them.
    session?.client.close();
    h.flush();
    expect(h.gateway.sessionCount).toBe(2);
    for (const target of targets) {
      const awareness = h.gateway.document(ws.workspaceId, target.docId);
      expect(awareness?.store.pendingStructs ?? null).toBeNull();
    }
    const outcomes = new Map<string, number>();
    for (const line of h.gateway.metrics.render().split('\n')) {
      const match = /^(flint_(?:session_closes_total|updates_refused_total|doc_updates_total|updates_set_aside_total)\S*) (\d+)$/.exec(line);
      if (match) outcomes.set(match[1]!, Number(match[2]));
    }
    alice.destroy();
    bob.destroy();
    h.gateway.shutdown();
    h.flush();
    store.close();
    return { sessions, outcomes };
  }
}
