import { call, type ApiResult } from './workspaceApi';

/** A model the workspace's owner connected (gateway: WorkspaceModels). Only the owner gets `baseUrl` and the masked key. */
export interface ModelConnection {
  kind: ConnectionKind;
  model: string;
  connectedAt: number;
  baseUrl?: string;
  maskedKey?: string | null;
}

export type ConnectionKind = 'openai' | 'ollama' | 'llamacpp';

export interface WorkspaceModelInfo {
  connection: ModelConnection | null;
  /** The gateway's own fast-route model ("flint-tiny": the bundled demo model). */
  gateway: { model: string | null };
  canConnect: boolean;
}

const path = (workspaceId: string, what: 'model' | 'demo-replay') => `/api/workspaces/${encodeURIComponent(workspaceId)}/${what}`;

export function fetchWorkspaceModel(workspaceId: string, token: string): Promise<ApiResult<WorkspaceModelInfo>> {
  return call(path(workspaceId, 'model'), { method: 'GET' }, token);
}

/** The gateway checks the endpoint with a real request first; a refusal says what it answered. */
export function connectModel(
  workspaceId: string,
  token: string,
  request: { kind: ConnectionKind; baseUrl?: string; apiKey?: string; model: string },
): Promise<ApiResult<{ connection: ModelConnection }>> {
  return call(path(workspaceId, 'model'), { method: 'PUT', body: JSON.stringify(request) }, token);
}

export function disconnectModel(workspaceId: string, token: string): Promise<ApiResult<void>> {
  return call(path(workspaceId, 'model'), { method: 'DELETE' }, token);
}

/** Plays the demo's scripted agent turn into the thread, as a replay. */
export function playDemoReplay(workspaceId: string, token: string, by: string, speed = 1): Promise<ApiResult<{ turnId: string }>> {
  return call(path(workspaceId, 'demo-replay'), { method: 'POST', body: JSON.stringify({ by, speed }) }, token);
}
