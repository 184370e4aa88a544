import type { FlintClient } from '@flint/client';
import { describe, expect, it } from 'vitest';
import { Harness } from '../../test/testHarness';

function colorsSeenBy(client: FlintClient): Map<string, string> {
  const seen = new Map<string, string>();
  for (const [clientId, state] of client.index.awareness.getStates()) {
    if (clientId === client.index.awareness.clientID) continue;
    const user = state.user as { name: string; color: string } | undefined;
    if (user) seen.set(user.name, user.color);
  }
  return seen;
}

describe('[P13] peer colours are distinct within a workspace', () => {
  it('a tab that asks for a colour someone present shows is given a free one, and keeps it', () => {
    const h = new Harness();
    const ws = h.gateway.createWorkspace('Colours', { 'a.ts': '' });
    const editor = h.gateway.links.create(ws.workspaceId, 'editor', 'Editor', null);
    const ann = h.client(ws.workspaceId, ws.owner.token);
    const bob = h.client(ws.workspaceId, editor.token);
    const cy = h.client(ws.workspaceId, editor.token);
    h.flush();
    ann.index.awareness.setLocalState({ user: { id: 'ann', name: 'Ann', color: '#6c9eff' } });
    h.flush();
    bob.index.awareness.setLocalState({ user: { id: 'bob', name: 'Bob', color: '#6c9eff' } });
    cy.index.awareness.setLocalState({ user: { id: 'cy', name: 'Cy', color: '#6c9eff' } });
    h.flush();
    const seen = colorsSeenBy(ann);
    expect(colorsSeenBy(bob).get('Ann')).toBe('#6c9eff');
    expect(new Set([colorsSeenBy(bob).get('Ann'), seen.get('Bob'), seen.get('Cy')]).size).toBe(3);
    // Moving the cursor re-announces the same colour: what others see does not change.
    const bobColor = seen.get('Bob');
    bob.index.awareness.setLocalState({ user: { id: 'bob', name: 'Bob', color: '#6c9eff' }, activeFile: 'a.ts' });
    h.flush();
    expect(colorsSeenBy(ann).get('Bob')).toBe(bobColor);
  });
});
