import { call, failureMessage, type ApiResult } from './workspaceApi';

const path = (workspaceId: string) => `/api/workspaces/${encodeURIComponent(workspaceId)}/recording`;

export function startRecording(workspaceId: string, token: string): Promise<ApiResult<{ recording: boolean; frames: number }>> {
  return call(path(workspaceId), { method: 'POST', body: '{}' }, token);
}

export interface RecordingStatus {
  recording: boolean;
  frames: number;
  /** Set when the recording stopped itself at the gateway's cap (a sentence to show). */
  stoppedBecause: string | null;
}

export function recordingStatus(workspaceId: string, token: string): Promise<ApiResult<RecordingStatus>> {
  return call(path(workspaceId), { method: 'GET', headers: { 'content-type': 'application/json' } }, token);
}

/** Stops the recording and returns the `.flintrec` file to save. */
export async function stopRecording(workspaceId: string, token: string): Promise<ApiResult<Blob>> {
  let response: Response;
  try {
    response = await fetch(path(workspaceId), { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
  } catch {
    return { ok: false, message: 'Could not reach the gateway. Check your connection and try again.' };
  }
  if (!response.ok) return { ok: false, message: await failureMessage(response) };
  return { ok: true, value: await response.blob() };
}
