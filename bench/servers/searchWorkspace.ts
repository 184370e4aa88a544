/**
 * B14's handle on the agent's `search` tool: the same `runTool` a thread turn runs, on the
 * gateway's event loop, over a workspace's files read as ThreadService reads them (the room's
 * docs). No model in the loop: what is measured is what the search costs everyone else.
 */
import { FILE_TEXT_KEY } from '@flint/protocol';
import { systemClock, type Gateway } from '@flint/gateway';
import { runTool } from '@flint/gateway/testing';

export async function searchWorkspace(gateway: Gateway, workspaceId: string, query: string, regex: boolean): Promise<{ ms: number; summary: string; ok: boolean }> {
  const held = gateway.holdRoom(workspaceId);
  if (!held) throw new Error(`no workspace ${workspaceId}`);
  const { room } = held;
  try {
    const started = performance.now();
    const outcome = await runTool(
      {
        paths: () => [...room.entries.keys()].filter((path) => room.entries.get(path)?.kind === 'file').sort(),
        read: (path) => {
          const fileId = room.fileIdAt(path);
          const live = fileId ? room.doc(fileId) : null;
          return fileId && live ? { fileId, text: live.doc.getText(FILE_TEXT_KEY).toString() } : null;
        },
        rename: () => ({ ok: false, message: 'read-only' }),
        remove: () => ({ ok: false, message: 'read-only' }),
      },
      'search',
      JSON.stringify({ query, regex }),
      systemClock,
    );
    return { ms: performance.now() - started, summary: outcome.summary, ok: outcome.ok };
  } finally {
    held.release();
  }
}
