/**
 * The kernel knows documents, sessions and permissions; features register as extensions
 * (core/Extension.ts) and hear their own namespace and the kernel's hooks.
 */
import type { SearchQuery } from '@flint/protocol';
import { describe, expect, it } from 'vitest';
import { Harness } from '../../test/testHarness';
import type { Extension, ExtensionFactory } from '../index';

const query: SearchQuery = { pattern: 'foo', regex: false, matchCase: false, wholeWord: false, include: '', exclude: '' };

function open(extensions: ExtensionFactory[]) {
  const h = new Harness(undefined, { idleUnloadMs: 1_000 }, undefined, undefined, undefined, extensions);
  const ws = h.gateway.createWorkspace('Ext', { 'a.ts': 'foo' });
  const viewer = h.gateway.links.create(ws.workspaceId, 'viewer', 'Viewer', null);
  return { h, ws, viewerToken: viewer.token };
}

describe('extensions', () => {
  it('a gateway without a feature answers its requests not_configured; the session stays open', async () => {
    const { h, ws } = open([]);
    const owner = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    expect(await h.answered(owner.search(query))).toMatchObject({ ok: false, code: 'not_configured' });
    expect(owner.status.kind).toBe('open');
  });

  it("an extension hears its namespace with the session's role, and sessions, rooms and shutdown in order", async () => {
    const heard: string[] = [];
    const recorder = (): Extension<'search'> => ({
      namespace: 'search',
      onMessage(message, session, room) {
        heard.push(`${message.type} from a ${session.role} in ${room.workspace.name}`);
        session.sendControl({ type: 'result', requestId: message.requestId, ok: false, code: 'busy', message: 'recorded' });
      },
      onSessionOpen: (session) => heard.push(`open ${session.role}`),
      onSessionClose: (session) => heard.push(`close ${session.role}`),
      onRoomLoad: (room) => heard.push(`load ${room.workspace.name}`),
      onRoomUnload: (room) => heard.push(`unload ${room.workspace.name}`),
      onClose: () => heard.push('shutdown'),
    });
    const { h, ws, viewerToken } = open([recorder]);
    // createWorkspace loaded the room to seed it, and let it go idle.
    h.clock.advance(1_000);
    const viewer = h.client(ws.workspaceId, viewerToken);
    h.flush();
    expect(await h.answered(viewer.search(query))).toMatchObject({ ok: false, code: 'busy', message: 'recorded' });
    viewer.destroy();
    h.flush();
    h.clock.advance(1_000);
    h.gateway.shutdown();
    expect(heard).toEqual(['load Ext', 'unload Ext', 'load Ext', 'open viewer', 'search.run from a viewer in Ext', 'close viewer', 'unload Ext', 'shutdown']);
  });

  it('a hook that throws does not break the kernel or keep the other extensions from hearing', async () => {
    const heard: string[] = [];
    const failing: ExtensionFactory = () => ({
      namespace: 'complete',
      onSessionOpen: () => {
        throw new Error('a bug in an extension');
      },
    });
    const recorder: ExtensionFactory = () => ({ namespace: 'search', onSessionOpen: (session) => heard.push(`open ${session.role}`) });
    const { h, ws } = open([failing, recorder]);
    const owner = h.client(ws.workspaceId, ws.owner.token);
    h.flush();
    expect(owner.status.kind).toBe('open');
    expect(heard).toEqual(['open owner']);
  });

  it('two extensions may not answer one namespace', () => {
    const twice: ExtensionFactory = () => ({ namespace: 'search' });
    expect(() => open([twice, twice])).toThrow(/two extensions answer "search\.\*"/);
  });
});
