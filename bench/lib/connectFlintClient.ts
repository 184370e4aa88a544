import { FlintClient, type WebSocketLike } from '@flint/client';
import { INDEX_ENTRIES_KEY, type IndexEntry } from '@flint/protocol';
import { WebSocket } from 'ws';
import { until } from './until';

/** A real FlintClient over a real `ws` WebSocket, resolved once the gateway welcomed it and the index synced. */
export async function connectFlintClient(url: string, workspaceId: string, token: string): Promise<FlintClient> {
  const client = new FlintClient({
    url,
    workspaceId,
    token,
    createSocket: (u) => new WebSocket(u, { perMessageDeflate: false }) as unknown as WebSocketLike,
    // RTT pings would add traffic the benchmark does not ask for.
    pingIntervalMs: 3_600_000,
  });
  await until(() => client.status.kind === 'open', 'the gateway to welcome the client', 30_000);
  await client.index.whenSynced();
  return client;
}

export function fileIdOf(client: FlintClient, path: string): string {
  const entry = client.index.doc.getMap<IndexEntry>(INDEX_ENTRIES_KEY).get(path);
  if (entry?.kind !== 'file') throw new Error(`no file at ${path}`);
  return entry.fileId;
}
