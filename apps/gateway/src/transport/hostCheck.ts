import { isIP } from 'node:net';

export interface HostCheckOptions {
  /** The interface the gateway listens on (`FLINT_HOST`). */
  bindHost: string;
  publicUrl: string | null;
  allowedOrigins: string[] | null;
}

/** Says whether a request's `Host` header names this gateway. */
export type HostCheck = (hostHeader: string | undefined) => boolean;

/**
 * Names that can only mean this machine. A page served from one of them cannot be an attacker's:
 * nobody can point `localhost` or an address at their own server for a browser elsewhere.
 */
export function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost') || name === '::1') return true;
  return isIP(name) === 4 && name.startsWith('127.');
}

/** The host name of a `Host` header (`[::1]:3000` → `::1`), or null when it has none. */
export function hostnameOf(hostHeader: string): string | null {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end > 1 ? host.slice(1, end) : null;
  }
  const colon = host.indexOf(':');
  const name = colon === -1 ? host : host.slice(0, colon);
  return name === '' ? null : name;
}

function hostnameOfUrl(url: string): string | null {
  try {
    return hostnameOf(new URL(url).host);
  } catch {
    // An entry that is not a URL names no host, and no browser's Origin can equal it either.
    return null;
  }
}

/**
 * Refuses requests whose `Host` is not one of the gateway's own names: DNS rebinding. A page on
 * `http://evil.example` whose name is re-pointed at 127.0.0.1 talks to a loopback gateway as its
 * own origin, so the browser's same-origin rule (and an Origin check derived from Host) let it
 * in; only the Host header still says `evil.example`. The rule is Vite's `server.allowedHosts`,
 * narrowed to loopback: a gateway bound to loopback answers to loopback names, plus the host of
 * `FLINT_PUBLIC_URL` and of each `FLINT_ALLOWED_ORIGINS` entry (a reverse proxy's name).
 * A gateway bound to another interface is meant to be reached by names it cannot know: no check.
 * A request without Host passes: browsers always send one, and the attack needs a browser.
 */
export function createHostCheck(options: HostCheckOptions): HostCheck {
  if (!isLoopbackHostname(options.bindHost.replace(/^\[(.*)\]$/, '$1'))) return () => true;
  const configured = new Set<string>();
  for (const url of [options.publicUrl, ...(options.allowedOrigins ?? [])]) {
    const hostname = url === null ? null : hostnameOfUrl(url);
    if (hostname !== null) configured.add(hostname);
  }
  return (hostHeader) => {
    if (hostHeader === undefined) return true;
    const hostname = hostnameOf(hostHeader);
    return hostname !== null && (isLoopbackHostname(hostname) || configured.has(hostname));
  };
}
