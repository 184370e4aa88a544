import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { fileIdOf, Harness } from '../../test/testHarness';

/**
 * FlintClient's `scheduleRemoteApply`: remote updates and cursor moves wait for the scheduled
 * call and are applied together, one transaction per doc; anything else from the gateway
 * applies what waits first, so nothing overtakes an update.
 */
function setup() {
  const h = new Harness();
  const ws = h.gateway.createWorkspace('P', { 'a.ts': 'start\n' });
  const pending: Array<() => void> = [];
  const batched = h.client(ws.workspaceId, ws.owner.token, { scheduleRemoteApply: (apply) => void pending.push(apply) });
  const writer = h.client(ws.workspaceId, h.gateway.links.create(ws.workspaceId, 'editor', 'w', null).token);
  h.flush();
  // The index arrives in sync step 2, which is never deferred.
  const fileId = fileIdOf(batched, 'a.ts');
  const mine = batched.openDoc(fileId);
  const theirs = writer.openDoc(fileId);
  h.flush();
  const runPending = () => pending.splice(0).forEach((apply) => apply());
  runPending();
  return { h, ws, batched, writer, fileId, mine, theirs, pending, runPending };
}

describe('batched remote updates', () => {
  it('holds remote edits until the scheduled apply, then applies them in one transaction', () => {
    const { h, mine, theirs, pending, runPending } = setup();
    expect(mine.doc.getText(FILE_TEXT_KEY).toString()).toBe('start\n');
    const events: string[] = [];
    mine.doc.getText(FILE_TEXT_KEY).observe((event) => events.push(JSON.stringify(event.delta)));
    for (const ch of 'abc') theirs.doc.getText(FILE_TEXT_KEY).insert(0, ch);
    h.flush();
    expect(mine.doc.getText(FILE_TEXT_KEY).toString()).toBe('start\n');
    expect(pending).toHaveLength(1); // one scheduled call for the whole batch
    runPending();
    expect(mine.doc.getText(FILE_TEXT_KEY).toString()).toBe('cbastart\n');
    expect(events).toEqual([JSON.stringify([{ insert: 'cba' }])]);
  });

  it('applies what waits before a control message, so a result never overtakes an update', async () => {
    const { h, batched, mine, theirs, pending } = setup();
    theirs.doc.getText(FILE_TEXT_KEY).insert(0, 'x');
    h.flush();
    expect(pending).toHaveLength(1);
    const created = batched.request({ type: 'file.create', path: 'b.ts', kind: 'file' });
    h.flush();
    const result = await created;
    expect(result.ok).toBe(true);
    // The result came after the update on the wire, so the text is applied before it resolves.
    expect(mine.doc.getText(FILE_TEXT_KEY).toString()).toBe('xstart\n');
    expect(batched.index.doc.getMap(INDEX_ENTRIES_KEY).has('b.ts')).toBe(true);
  });

  it('drops what waits for a doc closed in the meantime; reopening it syncs afresh', () => {
    const { h, batched, fileId, mine, theirs, runPending } = setup();
    theirs.doc.getText(FILE_TEXT_KEY).insert(0, 'gone ');
    h.flush();
    batched.closeDoc(fileId);
    expect(() => runPending()).not.toThrow();
    // The closed doc never got what was waiting for it.
    expect(mine.doc.getText(FILE_TEXT_KEY).toString()).toBe('start\n');
    const reopened = batched.openDoc(fileId);
    h.flush();
    runPending();
    expect(reopened.doc.getText(FILE_TEXT_KEY).toString()).toBe('gone start\n');
  });

  it('applies remote cursors after the text they point into', () => {
    const { h, mine, theirs, runPending } = setup();
    theirs.doc.getText(FILE_TEXT_KEY).insert(6, 'more');
    theirs.awareness.setLocalStateField('cursor', { at: 10 });
    h.flush();
    expect(mine.awareness.getStates().get(theirs.doc.clientID)?.cursor).toBeUndefined();
    let textWhenCursorArrived: string | null = null;
    mine.awareness.on('change', () => (textWhenCursorArrived ??= mine.doc.getText(FILE_TEXT_KEY).toString()));
    runPending();
    expect(textWhenCursorArrived).toBe('start\nmore');
    expect(mine.awareness.getStates().get(theirs.doc.clientID)?.cursor).toEqual({ at: 10 });
  });
});
