/** Paths from a client, however spelled, through the real gateway on in-memory sockets ([P14]). */
import { describePathError, INDEX_DOC_ID, INDEX_ENTRIES_KEY, normalizePath, validatePath, type IndexEntry } from '@flint/protocol';
import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { fileIdOf, Harness, insertUpdate, textOf } from '../../test/testHarness';

const runs = propertyParameters(150);

function setup(files: Record<string, string> = {}) {
  // File operations only: no frame budget to run out of while the clock stands still.
  const limits = { maxFrameBytes: 1 << 20, maxDocBytes: 1 << 20, maxFiles: 100, maxMessagesPerSecond: 100_000 };
  const h = new Harness(undefined, { limits });
  const ws = h.gateway.createWorkspace('Paths', files);
  const client = h.client(ws.workspaceId, ws.owner.token);
  h.flush();
  const paths = () => [...client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).keys()].sort();
  const ask = async (op: Parameters<typeof client.request>[0]) => {
    const result = client.request(op);
    h.flush();
    return result;
  };
  return { h, ws, client, paths, ask };
}

describe('paths through the gateway', () => {
  it('[P14] a path with an unpaired surrogate is refused with a sentence that says why', async () => {
    const { ask, paths } = setup();
    for (const path of ['a\ud800.ts', 'src/\udc00', '\ud83d']) {
      await expect(ask({ type: 'file.create', path, kind: 'file' })).resolves.toEqual({
        ok: false,
        code: 'invalid_path',
        message: describePathError('lone_surrogate'),
      });
    }
    expect(paths()).toEqual([]);
  });

  it('[P14] names with text-direction characters or C1 controls are refused, for files, folders and rename targets', async () => {
    const { ask, paths } = setup({ 'a.ts': '' });
    await expect(ask({ type: 'file.create', path: 'invoice\u202Etxt.exe', kind: 'file' })).resolves.toMatchObject({ ok: false, code: 'invalid_path', message: describePathError('bidi_control') });
    await expect(ask({ type: 'file.create', path: 'src\u2066', kind: 'folder' })).resolves.toMatchObject({ ok: false, code: 'invalid_path' });
    await expect(ask({ type: 'file.rename', from: 'a.ts', to: 'a\u200f.ts' })).resolves.toMatchObject({ ok: false, code: 'invalid_path' });
    await expect(ask({ type: 'file.create', path: 'a\u0085b', kind: 'file' })).resolves.toMatchObject({ ok: false, code: 'invalid_path', message: describePathError('control_character') });
    expect(paths()).toEqual(['a.ts']);
  });

  it('[P14] a decomposed name is stored composed (NFC), and either spelling finds it to rename or delete', async () => {
    const { client, ask, paths } = setup();
    const nfd = 'cafe\u0301/re\u0301sume\u0301.md';
    const nfc = 'caf\u00e9/r\u00e9sum\u00e9.md';
    await expect(ask({ type: 'file.create', path: nfd, kind: 'file' })).resolves.toEqual({ ok: true });
    expect(paths()).toEqual([nfc]);
    await expect(ask({ type: 'file.create', path: nfc, kind: 'file' })).resolves.toMatchObject({ ok: false, code: 'exists' });
    const fileId = fileIdOf(client, nfc);
    await expect(ask({ type: 'file.rename', from: 'cafe\u0301', to: 'Cafe\u0301s' })).resolves.toEqual({ ok: true });
    expect(paths()).toEqual(['Caf\u00e9s/r\u00e9sum\u00e9.md']);
    expect(fileIdOf(client, 'Caf\u00e9s/r\u00e9sum\u00e9.md')).toBe(fileId);
    await expect(ask({ type: 'file.delete', path: 'Cafe\u0301s/re\u0301sume\u0301.md' })).resolves.toEqual({ ok: true });
    expect(paths()).toEqual([]);
  });

  it('[P14] a workspace stored with decomposed names is normalized on load, contents and file ids kept', async () => {
    const h = new Harness();
    const { workspaceId, owner } = h.gateway.createWorkspace('Old', {});
    // As an older gateway stored it: the key as the client spelled it.
    const legacy = new Y.Doc();
    legacy.getMap<IndexEntry>(INDEX_ENTRIES_KEY).set('nai\u0308ve.ts', { kind: 'file', fileId: 'fLegacy' });
    legacy.getMap<IndexEntry>(INDEX_ENTRIES_KEY).set('Zu\u0308rich', { kind: 'folder' });
    h.store.appendUpdate(`${workspaceId}/${INDEX_DOC_ID}`, Y.encodeStateAsUpdate(legacy));
    h.store.appendUpdate(`${workspaceId}/fLegacy`, insertUpdate('kept'));
    h.restart();
    const client = h.client(workspaceId, owner.token);
    h.flush();
    const paths = () => [...client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).keys()].sort();
    expect(paths()).toEqual(['Z\u00fcrich', 'na\u00efve.ts']);
    const text = textOf(client, fileIdOf(client, 'na\u00efve.ts'));
    h.flush();
    expect(text.toString()).toBe('kept');
    const deleted = client.request({ type: 'file.delete', path: 'nai\u0308ve.ts' });
    h.flush();
    await expect(deleted).resolves.toEqual({ ok: true });
    expect(paths()).toEqual(['Z\u00fcrich']);
  });

  it('[P14] any string is refused, or can be created, renamed and deleted, whichever way its name is spelled', async () => {
    // One gateway for every run, as a long session would see them: each run leaves it empty.
    const { ask, paths } = setup();
    await fc.assert(
      fc.asyncProperty(anyPath, fc.constantFrom('file' as const, 'folder' as const), validName, async (raw, kind, name) => {
        const path = normalizePath(raw);
        const error = validatePath(path);
        // A failed run (or a shrink of it) may have left its path behind.
        for (const left of paths()) await ask({ type: 'file.delete', path: left.split('/')[0]! });
        const result = await ask({ type: 'file.create', path: raw, kind });
        if (error !== null) {
          expect(result).toEqual({ ok: false, code: 'invalid_path', message: describePathError(error) });
          expect(paths()).toEqual([]);
          return;
        }
        expect(result).toEqual({ ok: true });
        // What every client sees is exactly what the gateway stored.
        expect(paths()).toEqual([path]);
        const target = `moved/${name}`;
        await expect(ask({ type: 'file.rename', from: raw.normalize('NFD'), to: target })).resolves.toEqual({ ok: true });
        expect(paths()).toEqual([normalizePath(target)]);
        await expect(ask({ type: 'file.delete', path: 'moved' })).resolves.toEqual({ ok: true });
        expect(paths()).toEqual([]);
      }),
      runs,
    );
  });

  it('[P14] the generator of that property also produces acceptable paths', () => {
    const created = fc.sample(anyPath, { seed: runs.seed, numRuns: runs.numRuns }).filter((raw) => validatePath(normalizePath(raw)) === null);
    expect(created.length).toBeGreaterThan(runs.numRuns / 5);
  });
});

/** Pieces paths are made of, accents composed or not, and (less often) pieces that break them. */
const good = ['a', 'src', 'Z9', '.', '/', ' ', '-', '.ts', 'é', 'e\u0301', 'A\u030a', '\u212b', '\u0958', '名前', '\u{1F600}', '\u200b', '\ufeff', '\ufffd', 'x'.repeat(120)];
const bad = ['..', '//', '\\', '\ud83d', '\ude00', '\ud800', '\u0000', '\t', '\u007f', '\u0085', '\u009f', '\u061c', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069'];

/** 0–8 pieces, one in ten of them bad. */
const anyPath: fc.Arbitrary<string> = fc
  .array(fc.oneof({ arbitrary: fc.constantFrom(...good), weight: 9 }, { arbitrary: fc.constantFrom(...bad), weight: 1 }), { maxLength: 8, size: 'max' })
  .map((pieces) => pieces.join(''));

/** A name that validates: the target of a rename. */
const validName: fc.Arbitrary<string> = anyPath.map((path) => path.replaceAll('/', '')).filter((name) => validatePath(normalizePath(name)) === null);
