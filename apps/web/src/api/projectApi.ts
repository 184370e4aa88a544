import { call, failureMessage, type ApiResult } from './workspaceApi';

/** How git sees a file of the workspace, against HEAD. */
export type GitFileStatus = 'modified' | 'added' | 'deleted' | 'untracked' | 'renamed';

export interface GitChange {
  path: string;
  status: GitFileStatus;
}

/** What the gateway says of a workspace's folder on disk: null `git` when it is not in a repository. */
export interface ProjectInfo {
  /** The workspace is synced with a folder on the gateway's disk. */
  folder: boolean;
  git: { branch: string | null; files: GitChange[] } | null;
}

/** What an upload did, file by file. */
export interface UploadResult {
  created: string[];
  updated: string[];
  skipped: Array<{ path: string; reason: string }>;
}

const statuses: ReadonlySet<string> = new Set<GitFileStatus>(['modified', 'added', 'deleted', 'untracked', 'renamed']);

const isString = (value: unknown): value is string => typeof value === 'string';

/**
 * Reads a /project answer, leaving out what it cannot use (an entry with a status this IDE does
 * not know, a path that is not a string); null when the answer is not a project at all.
 */
export function decodeProjectInfo(body: unknown): ProjectInfo | null {
  if (typeof body !== 'object' || body === null) return null;
  const { folder, git } = body as { folder?: unknown; git?: unknown };
  if (git === null || git === undefined) return { folder: folder === true, git: null };
  if (typeof git !== 'object') return null;
  const { branch, files } = git as { branch?: unknown; files?: unknown };
  const changes: GitChange[] = [];
  for (const file of Array.isArray(files) ? (files as unknown[]) : []) {
    const { path, status } = (file ?? {}) as { path?: unknown; status?: unknown };
    if (isString(path) && path !== '' && isString(status) && statuses.has(status)) changes.push({ path, status: status as GitFileStatus });
  }
  return { folder: folder === true, git: { branch: isString(branch) ? branch : null, files: changes } };
}

/** Reads an upload answer, with empty lists for anything missing. */
export function decodeUploadResult(body: unknown): UploadResult {
  const value = (body ?? {}) as { created?: unknown; updated?: unknown; skipped?: unknown };
  const paths = (list: unknown) => (Array.isArray(list) ? (list as unknown[]).filter(isString) : []);
  const skipped = (Array.isArray(value.skipped) ? (value.skipped as unknown[]) : []).flatMap((item) => {
    const { path, reason } = (item ?? {}) as { path?: unknown; reason?: unknown };
    return isString(path) ? [{ path, reason: isString(reason) ? reason : 'no reason given' }] : [];
  });
  return { created: paths(value.created), updated: paths(value.updated), skipped };
}

const workspacePath = (workspaceId: string, rest: string) => `/api/workspaces/${encodeURIComponent(workspaceId)}/${rest}`;
const withPath = (path: string) => (path === '' ? '' : `?path=${encodeURIComponent(path)}`);

export async function fetchProject(workspaceId: string, token: string): Promise<ApiResult<ProjectInfo>> {
  const result = await call<unknown>(workspacePath(workspaceId, 'project'), { method: 'GET', cache: 'no-store' }, token);
  if (!result.ok) return result;
  const info = decodeProjectInfo(result.value);
  return info ? { ok: true, value: info } : { ok: false, message: 'The gateway sent a project description this IDE cannot read.' };
}

/** The text of a file at HEAD; null when HEAD has no such file. */
export async function fetchHeadText(workspaceId: string, token: string, path: string): Promise<ApiResult<string | null>> {
  const result = await call<{ text?: unknown }>(`${workspacePath(workspaceId, 'project/head')}?path=${encodeURIComponent(path)}`, { method: 'GET', cache: 'no-store' }, token);
  if (!result.ok) return result;
  const text = result.value?.text;
  return { ok: true, value: typeof text === 'string' ? text : null };
}

/** A zip of the workspace (`folder` '') or of one folder, with the file name the gateway gave it, if any. */
export async function fetchZip(workspaceId: string, token: string, folder: string): Promise<ApiResult<{ blob: Blob; fileName: string | null }>> {
  let response: Response;
  try {
    response = await fetch(workspacePath(workspaceId, 'zip') + withPath(folder), { headers: { authorization: `Bearer ${token}` }, cache: 'no-store' });
  } catch {
    return { ok: false, message: 'Could not reach the gateway. Check your connection and try again.' };
  }
  if (!response.ok) return { ok: false, message: await failureMessage(response) };
  try {
    return { ok: true, value: { blob: await response.blob(), fileName: fileNameOf(response.headers.get('content-disposition')) } };
  } catch {
    return { ok: false, message: 'The download was cut off. Try again.' };
  }
}

/** The file name of a Content-Disposition header (RFC 6266: filename* wins over filename). */
export function fileNameOf(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // A malformed escape: fall back to the plain filename below.
    }
  }
  const plain = /filename\s*=\s*(?:"([^"]*)"|([^;]+))/.exec(header);
  const name = (plain?.[1] ?? plain?.[2])?.trim();
  return name ? name : null;
}

/**
 * Sends a zip to be unpacked into `folder` ('' the workspace root). XMLHttpRequest rather than
 * fetch: it reports how much of the body has gone, which a large upload should show.
 */
export function uploadZip(
  workspaceId: string,
  token: string,
  folder: string,
  zip: Uint8Array<ArrayBuffer>,
  onProgress?: (sentBytes: number, totalBytes: number) => void,
): Promise<ApiResult<UploadResult>> {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open('POST', workspacePath(workspaceId, 'files') + withPath(folder));
    request.setRequestHeader('authorization', `Bearer ${token}`);
    request.setRequestHeader('content-type', 'application/zip');
    request.responseType = 'text';
    if (onProgress) request.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : zip.byteLength);
    request.onerror = () => resolve({ ok: false, message: 'Could not reach the gateway. Check your connection and try again.' });
    request.onabort = () => resolve({ ok: false, message: 'The upload was stopped before it finished.' });
    request.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // Not JSON (a proxy's error page): the status alone says what happened.
      }
      if (request.status >= 200 && request.status < 300) resolve({ ok: true, value: decodeUploadResult(body) });
      else resolve({ ok: false, message: messageFor(request.status, body) });
    };
    request.send(new Blob([zip], { type: 'application/zip' }));
  });
}

function messageFor(status: number, body: unknown): string {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return error;
  if (status === 403) return 'This link cannot add files. Ask for an editor link.';
  if (status === 413) return 'The upload is larger than the gateway accepts. Upload fewer files at a time.';
  return `The gateway answered ${status}.`;
}
