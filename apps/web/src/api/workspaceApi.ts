import type { Role } from '@flint/protocol';

/** A live link as the gateway lists it; its token is shown only once, when it is created. */
export interface LinkInfo {
  id: string;
  role: Role;
  label: string;
  createdAt: number;
  expiresAt: number | null;
}

export type ApiResult<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Calls the gateway's REST API on this origin with a JSON body (the link's token as a Bearer
 * header); failures come back as a sentence for the user.
 */
export async function call<T>(path: string, init: RequestInit, token?: string): Promise<ApiResult<T>> {
  const headers = new Headers(init.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  if (init.body) headers.set('content-type', 'application/json');
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch {
    return { ok: false, message: 'Could not reach the gateway. Check your connection and try again.' };
  }
  if (response.status === 204) return { ok: true, value: undefined as T };
  if (!response.ok) return { ok: false, message: await failureMessage(response) };
  const body: unknown = await response.json().catch(() => null);
  return { ok: true, value: body as T };
}

/** The gateway's `{ error }` sentence of a failed answer, else its status. */
export async function failureMessage(response: Response): Promise<string> {
  const body: unknown = await response.json().catch(() => null);
  const error = (body as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : `The gateway answered ${response.status}.`;
}

const linksPath = (workspaceId: string) => `/api/workspaces/${encodeURIComponent(workspaceId)}/links`;

export async function listLinks(workspaceId: string, token: string): Promise<ApiResult<LinkInfo[]>> {
  const result = await call<{ links: LinkInfo[] }>(linksPath(workspaceId), { method: 'GET' }, token);
  return result.ok ? { ok: true, value: result.value.links } : result;
}

export function createLink(
  workspaceId: string,
  token: string,
  request: { role: 'owner' | 'editor' | 'viewer'; label?: string; expiresInMs: number | null },
): Promise<ApiResult<{ link: LinkInfo; url: string }>> {
  return call(linksPath(workspaceId), { method: 'POST', body: JSON.stringify(request) }, token);
}

/** `by`: the revoker's display name, which the revoked tabs are shown. */
export function revokeLink(workspaceId: string, token: string, linkId: string, by: string): Promise<ApiResult<void>> {
  return call(`${linksPath(workspaceId)}/${encodeURIComponent(linkId)}`, { method: 'DELETE', body: JSON.stringify({ by }) }, token);
}

/** Creates a workspace; `seed: 'demo'` starts it with the demo project instead of a README. */
export function createWorkspace(request: { name?: string; seed?: 'demo' }): Promise<ApiResult<{ workspaceId: string; url: string }>> {
  return call('/api/workspaces', { method: 'POST', body: JSON.stringify(request) });
}

/** The model serving each agent route, as the gateway's /readyz reports it (null: none configured). */
export interface RouteModels {
  fast: string | null;
  deep: string | null;
}

/**
 * Which models this gateway serves, so the agent panel can say when it is the bundled demo
 * model. /readyz answers 503 with the same body while the fast route is down, so the status
 * does not matter; null when the answer cannot be read.
 */
export async function fetchRouteModels(): Promise<RouteModels | null> {
  try {
    const response = await fetch('/readyz', { cache: 'no-store' });
    const body = (await response.json()) as { routes?: Record<string, { model?: unknown } | undefined> } | null;
    const model = (route: string) => {
      const value = body?.routes?.[route]?.model;
      return typeof value === 'string' ? value : null;
    };
    return body?.routes ? { fast: model('fast'), deep: model('deep') } : null;
  } catch (error) {
    // The panel then names the model from the turns it sees; nothing else depends on this.
    console.warn('Flint: could not read /readyz', error);
    return null;
  }
}
