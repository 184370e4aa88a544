import { FlintClient, type WebSocketLike } from '@flint/client';
import { FILE_TEXT_KEY, INDEX_ENTRIES_KEY, type IndexEntry } from '@flint/protocol';
import { until as waitUntil } from '@flint/test-kit';
import { WebSocket } from 'ws';
import type * as Y from 'yjs';
import type { GatewayProcess } from './gatewayProcesses';

/** What the cluster tests share: waiting for a condition, clients placed like a balancer's. */

export function until(condition: () => boolean | Promise<boolean>, what: string, debug?: () => string, timeoutMs = 20_000): Promise<void> {
  return waitUntil(condition, what, { debug, timeoutMs });
}

/**
 * A client that connects, like a browser behind a load balancer, to whichever gateway `pick`
 * names at each (re)connection.
 */
export function client(pick: () => GatewayProcess, workspaceId: string, token: string): FlintClient {
  return new FlintClient({
    url: 'ws://balanced/ws',
    workspaceId,
    token,
    minBackoffMs: 20,
    maxBackoffMs: 200,
    createSocket: () => new WebSocket(`ws://127.0.0.1:${pick().port}/ws`) as unknown as WebSocketLike,
  });
}

export function fileIdAt(c: FlintClient, path: string): string {
  const entry = c.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).get(path);
  return entry?.kind === 'file' ? entry.fileId : '';
}

export async function openFile(c: FlintClient, path: string): Promise<Y.Text> {
  await until(() => fileIdAt(c, path) !== '', `${path} in the tree`);
  const handle = c.openDoc(fileIdAt(c, path));
  await handle.whenSynced();
  return handle.doc.getText(FILE_TEXT_KEY);
}

/** Creates a link through a gateway's REST API: its id and token. */
export async function shareLink(gateway: GatewayProcess, workspaceId: string, ownerToken: string, role: 'editor' | 'viewer'): Promise<{ id: string; token: string }> {
  const res = await fetch(`${gateway.url}/api/workspaces/${workspaceId}/links`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ownerToken}` },
    body: JSON.stringify({ role }),
  });
  if (res.status !== 201) throw new Error(`share: ${res.status} ${await res.text()}`);
  const { link, url } = (await res.json()) as { link: { id: string }; url: string };
  return { id: link.id, token: new URL(url).hash.replace('#token=', '') };
}

export async function revokeLink(gateway: GatewayProcess, workspaceId: string, ownerToken: string, linkId: string): Promise<number> {
  const res = await fetch(`${gateway.url}/api/workspaces/${workspaceId}/links/${linkId}`, {
    method: 'DELETE',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ownerToken}` },
  });
  return res.status;
}
