/** What the address bar asks for. The token lives in the fragment so it never reaches a server log. */
export type Route =
  | { kind: 'landing' }
  | { kind: 'workspace'; workspaceId: string; token: string }
  | { kind: 'missing-token'; workspaceId: string }
  | { kind: 'not-found' };

export function readRoute(location: Pick<Location, 'pathname' | 'hash'>): Route {
  if (location.pathname === '/' || location.pathname === '') return { kind: 'landing' };
  const match = /^\/w\/([\w-]{1,64})\/?$/.exec(location.pathname);
  if (!match?.[1]) return { kind: 'not-found' };
  const token = new URLSearchParams(location.hash.replace(/^#/, '')).get('token');
  if (!token) return { kind: 'missing-token', workspaceId: match[1] };
  return { kind: 'workspace', workspaceId: match[1], token };
}

/** The gateway's WebSocket endpoint on the origin that served the page. */
export function socketUrl(location: Pick<Location, 'protocol' | 'host'>): string {
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws`;
}
