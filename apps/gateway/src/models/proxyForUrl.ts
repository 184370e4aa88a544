/**
 * The one proxy decision for every provider connection — SSE and other HTTP requests through
 * undici (ProviderHttp), the Responses WebSocket (ResponsesSocket): given the URL and the
 * environment, which proxy, or none. Two libraries each reading the variables their own way is
 * how `NO_PROXY=openai.com` once kept SSE direct while the WebSocket to api.openai.com went
 * through the proxy.
 *
 * The variables are read as curl reads them:
 * - `https_proxy` / `HTTPS_PROXY` for https: and wss:, `http_proxy` / `HTTP_PROXY` for http: and
 *   ws:, else `all_proxy` / `ALL_PROXY`; the lower-case name wins, an empty value counts as unset.
 *   (curl reads `http_proxy` only in lower case, against CGI's HTTP_PROXY header; a gateway is
 *   no CGI script, so the upper-case name counts here, as in undici, Go and Python.)
 * - A proxy without a scheme is `http://`. Only HTTP and HTTPS proxies: a SOCKS one is refused
 *   (`ProxyConfigError`) rather than ignored, which would send the traffic around it.
 * - `no_proxy` / `NO_PROXY`: entries separated by commas (and blanks). An entry matches the host
 *   itself and every name under it — `example.com` and `.example.com` both match `example.com`
 *   and `api.example.com`, not `notexample.com`; trailing dots and case do not count. `*` matches
 *   every host. An IP address matches that address, `10.0.0.0/8` or `fd00::/8` a network
 *   (IPv6 with or without brackets); names never match addresses or the reverse. Beyond curl, an
 *   entry may name a port (`example.com:8443`, `[::1]:8080`): then it matches that port only.
 */
import { BlockList, isIP } from 'node:net';

export type ProxyEnv = Readonly<Record<string, string | undefined>>;

/** A proxy variable Flint cannot use; the message says which and what to set instead. */
export class ProxyConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProxyConfigError';
  }
}

const proxyVariables = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'];
const defaultPorts: Record<string, number> = { 'http:': 80, 'ws:': 80, 'https:': 443, 'wss:': 443 };

/** Whether any proxy variable is set: without one, no connection needs a proxy layer at all. */
export function anyProxyConfigured(env: ProxyEnv): boolean {
  return proxyVariables.some((name) => Boolean(env[name]));
}

/**
 * The proxy for a connection to `target`, or null to connect directly. Throws ProxyConfigError
 * for a proxy variable that is not an HTTP(S) proxy URL.
 */
export function proxyForUrl(target: URL, env: ProxyEnv): URL | null {
  const secure = target.protocol === 'https:' || target.protocol === 'wss:';
  if (!secure && target.protocol !== 'http:' && target.protocol !== 'ws:') return null;
  const names = secure ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
  const name = [...names, 'all_proxy', 'ALL_PROXY'].find((n) => Boolean(env[n]));
  if (!name) return null;
  const port = Number(target.port) || defaultPorts[target.protocol]!;
  if (bypassesProxy(target.hostname, port, env.no_proxy || env.NO_PROXY || '')) return null;
  return proxyUrl(name, env[name]!);
}

function proxyUrl(name: string, value: string): URL {
  const text = value.includes('://') ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProxyConfigError(`${name} is not a proxy URL ("${value}"): set it to http://host:port.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProxyConfigError(`${name} names a ${url.protocol.slice(0, -1)} proxy; Flint reaches providers only through an HTTP or HTTPS proxy (http://host:port).`);
  }
  return url;
}

/** Whether `NO_PROXY`'s `list` sends a connection to `hostname`:`port` around the proxy. */
export function bypassesProxy(hostname: string, port: number, list: string): boolean {
  const host = unbracket(hostname).replace(/\.$/, '').toLowerCase();
  if (host === '') return false;
  const family = isIP(host);
  for (const raw of list.split(/[\s,]+/)) {
    const entry = parseEntry(raw);
    if (!entry) continue;
    if (entry.port !== null && entry.port !== port) continue;
    if (entry.host === '*') return true;
    if (family === 0 ? nameMatches(host, entry.host) : addressMatches(host, family, entry.host)) return true;
  }
  return false;
}

/** An entry's host and its port, if it names one: `example.com:8443`, `[::1]:8080`, `::1`, `10.0.0.0/8`. */
function parseEntry(raw: string): { host: string; port: number | null } | null {
  const entry = raw.trim().toLowerCase();
  if (entry === '') return null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] ? Number(bracketed[2]) : null };
  // More than one colon and no brackets: an IPv6 address (or network), which has no port.
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  if (withPort) return { host: withPort[1]!, port: Number(withPort[2]) };
  return { host: entry, port: null };
}

function nameMatches(host: string, entry: string): boolean {
  const name = entry.replace(/^\*?\./, '').replace(/\.$/, '');
  if (name === '' || isIP(name) !== 0 || name.includes('/')) return false;
  return host === name || host.endsWith(`.${name}`);
}

function addressMatches(host: string, family: number, entry: string): boolean {
  const [address = '', bits] = entry.split('/');
  const entryFamily = isIP(address);
  if (entryFamily !== family) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) return false;
  const network = new BlockList();
  network.addSubnet(address, prefix, type);
  return network.check(host, type);
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
