import { describe, expect, it } from 'vitest';
import { describeUnsynced, unsyncedReason } from './unsyncedFile';

describe('a folder file that stopped syncing', () => {
  it('is told by its entry, and the tab says that typing is kept and what to do', () => {
    expect(unsyncedReason({ kind: 'file', fileId: 'f1' })).toBeNull();
    expect(unsyncedReason({ kind: 'folder' })).toBeNull();
    expect(unsyncedReason(undefined)).toBeNull();
    expect(unsyncedReason({ kind: 'file', fileId: 'f1', unsynced: 'not-text' })).toBe('not-text');
    // An entry from a newer gateway with a reason this tab does not know says nothing wrong.
    expect(unsyncedReason({ kind: 'file', fileId: 'f1', unsynced: 'other' as never })).toBeNull();
    for (const reason of ['not-text', 'too-large'] as const) expect(describeUnsynced(reason)).toMatch(/kept in the workspace but not written/);
  });
});
