import { call, type ApiResult } from './workspaceApi';

export interface PlaygroundInfo {
  playground: true;
  /** The template's name, e.g. "Tally (playground)". */
  name: string;
  /** A workspace no tab has open is deleted after this long. */
  idleMinutes: number;
}

let asked: Promise<PlaygroundInfo | null> | null = null;

/** Whether this gateway is a playground (asked once per page); null when it is not, or cannot say. */
export function fetchPlayground(): Promise<PlaygroundInfo | null> {
  asked ??= fetch('/api/playground', { cache: 'no-store' })
    .then(async (response) => (response.ok ? ((await response.json()) as PlaygroundInfo) : null))
    .catch((error: unknown) => {
      console.warn('Flint: could not ask whether this is a playground', error);
      return null;
    });
  return asked;
}

/** A fresh workspace from the template, with an owner link of this visitor's own; a 429 says when to come back. */
export function startPlayground(): Promise<ApiResult<{ workspaceId: string; url: string }>> {
  return call('/api/playground/workspaces', { method: 'POST', body: '{}' });
}

export function resetPlayground(workspaceId: string, token: string, by: string): Promise<ApiResult<void>> {
  return call(`/api/workspaces/${encodeURIComponent(workspaceId)}/reset`, { method: 'POST', body: JSON.stringify({ by }) }, token);
}
