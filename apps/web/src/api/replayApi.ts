import { call, type ApiResult } from './workspaceApi';

/** Where a replay is (the gateway's `ReplayState`). */
export interface ReplayState {
  playing: boolean;
  speed: 1 | 2 | 10;
  atMs: number;
  durationMs: number;
  title: string;
}

export interface CreatedReplay {
  workspaceId: string;
  viewerToken: string;
  controlToken: string;
  state: ReplayState;
}

/** Uploads a `.flintrec`'s text: a new read-only workspace that plays it, paused at its start. */
export function createReplay(recording: string): Promise<ApiResult<CreatedReplay>> {
  return call('/api/replays', { method: 'POST', body: JSON.stringify({ recording }) });
}

const path = (workspaceId: string) => `/api/replays/${encodeURIComponent(workspaceId)}`;

/** The replay's state, for any link of its workspace; a failure when the workspace is no replay. */
export async function replayState(workspaceId: string, token: string): Promise<ApiResult<ReplayState>> {
  const result = await call<{ state: ReplayState }>(path(workspaceId), { method: 'GET' }, token);
  return result.ok ? { ok: true, value: result.value.state } : result;
}

export type ReplayAction = { action: 'play' } | { action: 'pause' } | { action: 'seek'; atMs: number } | { action: 'speed'; speed: 1 | 2 | 10 };

/** The presenter's control (its secret, not a link). */
export async function controlReplay(workspaceId: string, controlToken: string, action: ReplayAction): Promise<ApiResult<ReplayState>> {
  const result = await call<{ state: ReplayState }>(path(workspaceId), { method: 'POST', body: JSON.stringify(action) }, controlToken);
  return result.ok ? { ok: true, value: result.value.state } : result;
}
