/** Randomness is injected like time: a seeded Random replays every id and token the gateway makes. */
import { FakeClock, seededRandomSource } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { createGateway, SqliteStore } from '../index';

function seededWorkspace(seed: number) {
  const gateway = createGateway({}, { store: new SqliteStore(':memory:'), clock: new FakeClock(), random: seededRandomSource(seed) });
  const created = gateway.createWorkspace('Seeded', { 'src/a.ts': 'a', 'src/b.ts': 'b' });
  const held = gateway.holdRoom(created.workspaceId)!;
  const files = [...held.room.entries].map(([path, entry]) => [path, entry.kind === 'file' ? entry.fileId : null]);
  held.release();
  return { workspaceId: created.workspaceId, owner: created.owner, files };
}

describe('injected randomness', () => {
  it('the same seed makes the same workspace, file and link ids and the same owner token', () => {
    const first = seededWorkspace(7);
    expect(seededWorkspace(7)).toEqual(first);
    expect(first.workspaceId).toMatch(/^w[A-Za-z0-9_-]{12}$/);
    expect(first.owner.token).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });

  it('another seed makes other ids', () => {
    expect(seededWorkspace(8).workspaceId).not.toBe(seededWorkspace(7).workspaceId);
  });
});
