import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../storage/SqliteStore';
import { fileIdOf, Harness } from '../../../test/testHarness';
import { MemoryBus, MemoryHub } from '../../../test/MemoryBus';

/** Two gateways on one store over an in-memory bus, every message delivered. */
function twoGateways() {
  const hub = new MemoryHub();
  const store = new SqliteStore(':memory:');
  const buses = [new MemoryBus(hub, 'g0'), new MemoryBus(hub, 'g1')];
  const gateways = buses.map((bus) => new Harness(store, {}, undefined, undefined, () => bus));
  gateways.forEach((h, i) => void buses[i]!.start(h.gateway.cluster));
  const settle = () => {
    for (let round = 0; round < 20; round++) {
      for (const h of gateways) h.flush();
      if (hub.deliver() === 0) return;
    }
  };
  return { gateways, settle };
}

describe('presence across gateways', () => {
  it('[P13] no one poses as a person on another gateway: the name another link shows as there is taken here too', () => {
    const { gateways, settle } = twoGateways();
    const [g0, g1] = gateways as [Harness, Harness];
    const ws = g0.gateway.createWorkspace('Presence', { 'a.ts': 'x\n' });
    const editor = g0.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
    const alice = g0.client(ws.workspaceId, ws.owner.token);
    settle();
    const fileId = fileIdOf(alice, 'a.ts');
    alice.openDoc(fileId).awareness.setLocalStateField('user', { id: 'alice-tab', name: 'Alice', color: '#ff0000' });
    settle();
    const mallory = g1.client(ws.workspaceId, editor.token);
    settle();
    const doc = mallory.openDoc(fileId);
    settle();
    doc.awareness.setLocalStateField('user', { id: 'm', name: 'alice', color: '#00ff00' });
    settle();
    const seenByAlice = [...alice.openDoc(fileId).awareness.getStates().values()].map((state) => (state as { user?: { name?: string } }).user?.name);
    expect(seenByAlice).toContain('Alice');
    expect(seenByAlice).toContain('alice (2)');
    // The same link on another gateway (Alice's second tab) keeps her name.
    const aliceElsewhere = g1.client(ws.workspaceId, ws.owner.token);
    settle();
    aliceElsewhere.openDoc(fileId).awareness.setLocalStateField('user', { id: 'alice-tab-2', name: 'Alice', color: '#ff0000' });
    settle();
    const names = [...mallory.openDoc(fileId).awareness.getStates().values()].map((state) => (state as { user?: { name?: string } }).user?.name);
    expect(names.filter((name) => name === 'Alice')).toHaveLength(2);
  });

  it('[P13] colours stay apart across gateways: a colour someone shows on another gateway is taken here too', () => {
    const { gateways, settle } = twoGateways();
    const [g0, g1] = gateways as [Harness, Harness];
    const ws = g0.gateway.createWorkspace('Colours', { 'a.ts': 'x\n' });
    const editor = g0.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
    const alice = g0.client(ws.workspaceId, ws.owner.token);
    settle();
    alice.index.awareness.setLocalStateField('user', { id: 'alice-tab', name: 'Alice', color: '#6c9eff' });
    settle();
    const bob = g1.client(ws.workspaceId, editor.token);
    settle();
    bob.index.awareness.setLocalStateField('user', { id: 'bob-tab', name: 'Bob', color: '#6c9eff' });
    settle();
    const colors = [...alice.index.awareness.getStates().values()].map((state) => (state as { user?: { name: string; color: string } }).user);
    const bobsColor = colors.find((user) => user?.name === 'Bob')?.color;
    expect(bobsColor).toMatch(/^#[0-9a-f]{6}$/);
    expect(bobsColor).not.toBe('#6c9eff');
  });
});
