import { FlintClient, type ConnectionStatus } from '@flint/client';
import { CloseCode, type Role } from '@flint/protocol';
import { create } from 'zustand';
import { forgetWorkspace, rememberWorkspace } from '../memory/recentWorkspaces';
import { socketUrl } from '../route';

interface ConnectionState {
  client: FlintClient | null;
  workspaceId: string | null;
  /** The link token: it also authorizes the REST calls of the share dialog. */
  token: string | null;
  status: ConnectionStatus;
  rttMs: number | null;
  /** The role of the last welcome, kept while reconnecting so the UI does not flicker. */
  role: Role | null;
  workspaceName: string | null;
}

export const useConnection = create<ConnectionState>(() => ({
  client: null,
  workspaceId: null,
  token: null,
  status: { kind: 'connecting', attempt: 0 },
  rttMs: null,
  role: null,
  workspaceName: null,
}));

/**
 * When remote edits are applied. After a quiet spell (nothing applied for two frames: a
 * collaborator's keystroke) at once, so it is drawn in the frame about to be painted. While
 * they keep coming (an agent flushes every 8 ms) once per animation frame, so Monaco makes one
 * edit per frame however many updates arrive. A hidden tab gets no frames: a timer stands in.
 */
const quietMs = 33;
let lastAppliedAt = Number.NEGATIVE_INFINITY;
function scheduleRemoteApply(apply: () => void): void {
  const applyNow = () => {
    lastAppliedAt = performance.now();
    apply();
  };
  if (performance.now() - lastAppliedAt > quietMs) return applyNow();
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    cancelAnimationFrame(frame);
    clearTimeout(timer);
    applyNow();
  };
  const frame = requestAnimationFrame(run);
  const timer = setTimeout(run, 100);
}

const deadLinkCodes = new Set<number>([CloseCode.LinkRevoked, CloseCode.LinkExpired, CloseCode.Unauthorized, CloseCode.WorkspaceNotFound]);

/** Opens the tab's one connection to a workspace. Idempotent for the same link. */
export function connect(workspaceId: string, token: string): FlintClient {
  const current = useConnection.getState();
  if (current.client && current.workspaceId === workspaceId && current.token === token) return current.client;
  current.client?.destroy();
  const client = new FlintClient({
    url: socketUrl(window.location),
    workspaceId,
    token,
    createSocket: (url) => new WebSocket(url),
    scheduleRemoteApply,
  });
  useConnection.setState({ client, workspaceId, token, status: client.status, rttMs: null, role: null });
  client.onStatus((status) => {
    if (status.kind === 'open') {
      useConnection.setState({ status, role: status.role, workspaceName: status.workspaceName });
      document.title = `${status.workspaceName} — Flint`;
      rememberWorkspace({ id: workspaceId, name: status.workspaceName, role: status.role, token });
    } else {
      // A replay went back in time: what this tab holds is ahead of it; load it afresh.
      if (status.kind === 'closed' && status.code === CloseCode.Rewound) return window.location.reload();
      // A token that no longer opens the workspace is no way back in: forget it.
      if (status.kind === 'closed' && deadLinkCodes.has(status.code)) forgetWorkspace(workspaceId, token);
      useConnection.setState({ status });
    }
  });
  client.onRtt((rttMs) => useConnection.setState({ rttMs }));
  // Something another participant sent that this tab could not use: it was left out (and the
  // document resynced); the tab keeps working, so a console line is enough.
  client.onFault((fault) => console.warn(`Flint: ignored ${fault.message} in ${fault.docId}`));
  return client;
}

/** The workspace and the link's token, for REST calls made for the link; null before connect(). */
export function linkCredentials(): { workspaceId: string; token: string } | null {
  const { workspaceId, token } = useConnection.getState();
  return workspaceId && token ? { workspaceId, token } : null;
}

export function requireClient(): FlintClient {
  const { client } = useConnection.getState();
  if (!client) throw new Error('no workspace connection: connect() runs before the workspace renders');
  return client;
}

/** Whether this tab may change files now: an editor or owner, and not closed for good. */
export function selectCanEdit(state: ConnectionState): boolean {
  return state.status.kind !== 'closed' && state.role !== null && state.role !== 'viewer';
}
