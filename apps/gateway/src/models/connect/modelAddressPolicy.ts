import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * Where a workspace owner's model connection may point (decision 0031, "Addresses"). Whoever
 * owns a workspace makes the gateway send requests to the URL they give, so every address is
 * screened, once before the check (the host resolved first) and again at each connection (the
 * dispatcher's DNS lookup), so a name that resolves elsewhere the second time is refused too:
 *
 * - link-local (169.254/16, fe80::/10) and the clouds' metadata addresses: always refused;
 * - loopback, "this host" and private ranges (127/8, 0/8, ::1, ::, 10/8, 172.16/12,
 *   192.168/16, 100.64/10, fc00::/7): refused unless the operator allows them
 *   (`FLINT_ALLOW_PRIVATE_MODEL_URLS=1`; on by default when the gateway listens on loopback
 *   only, so a laptop's Ollama on 127.0.0.1:11434 works);
 * - the gateway's own port on one of this machine's addresses: always refused.
 */
export type AddressRefusal = 'link-local' | 'private' | 'gateway';

const alwaysRefused = new BlockList();
alwaysRefused.addSubnet('169.254.0.0', 16, 'ipv4');
alwaysRefused.addSubnet('fe80::', 10, 'ipv6');
// Metadata services outside link-local: Alibaba Cloud's, AWS's IPv6 one; multicast and broadcast.
alwaysRefused.addAddress('100.100.100.200', 'ipv4');
alwaysRefused.addAddress('fd00:ec2::254', 'ipv6');
alwaysRefused.addSubnet('224.0.0.0', 4, 'ipv4');
alwaysRefused.addAddress('255.255.255.255', 'ipv4');
alwaysRefused.addSubnet('ff00::', 8, 'ipv6');

const privateRanges = new BlockList();
for (const [network, prefix] of [
  ['127.0.0.0', 8],
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
] as const)
  privateRanges.addSubnet(network, prefix, 'ipv4');
privateRanges.addAddress('::1', 'ipv6');
privateRanges.addAddress('::', 'ipv6');
privateRanges.addSubnet('fc00::', 7, 'ipv6');

/** An IPv4 address carried in IPv6 (`::ffff:a.b.c.d`, NAT64's `64:ff9b::a.b.c.d`) is judged as IPv4. */
function unwrap(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const family = isIP(address);
  if (family === 4) return { address, type: 'ipv4' };
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return { address: dotted[1]!, type: 'ipv4' };
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, type: 'ipv4' };
  }
  return { address: lower, type: 'ipv6' };
}

export interface ModelAddressPolicyOptions {
  /** Loopback and private ranges are allowed (see the header). */
  allowPrivate: boolean;
  /** The port the gateway listens on (null before it listens). */
  gatewayPort: () => number | null;
  /** This machine's addresses; defaults to its network interfaces'. */
  localAddresses?: () => string[];
}

/** `FLINT_ALLOW_PRIVATE_MODEL_URLS` (1 or 0), else on exactly when the gateway listens on loopback only. */
export function allowPrivateModelUrls(env: Record<string, string | undefined>, listenHost: string): boolean {
  const set = env.FLINT_ALLOW_PRIVATE_MODEL_URLS?.trim();
  if (set === '1' || set === 'true') return true;
  if (set === '0' || set === 'false') return false;
  const host = listenHost.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** The sentence a refused address gets: fixed per class, naming only what the owner typed. */
export function refusalSentence(host: string, refusal: AddressRefusal): string {
  switch (refusal) {
    case 'link-local':
      return `${host} is a link-local or cloud metadata address: Flint never connects models there.`;
    case 'private':
      return `${host} is a loopback or private-network address, which this gateway does not connect models to (its operator can allow them with FLINT_ALLOW_PRIVATE_MODEL_URLS=1).`;
    case 'gateway':
      return `${host} is this Flint gateway itself, not a model server.`;
  }
}

/** Thrown by the screening lookup: the name resolved to an address the policy refuses. */
export class RefusedAddressError extends Error {
  readonly code = 'EFLINTREFUSEDADDRESS';
  constructor(readonly refusal: AddressRefusal) {
    super(`refused address (${refusal})`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class ModelAddressPolicy {
  constructor(private readonly options: ModelAddressPolicyOptions) {}

  /** Why `address` may not be connected to on `port`, or null. */
  refusalOf(address: string, port: number): AddressRefusal | null {
    const { address: ip, type } = unwrap(address);
    if (isIP(ip) === 0) return 'link-local';
    if (alwaysRefused.check(ip, type)) return 'link-local';
    const gatewayPort = this.options.gatewayPort();
    if (gatewayPort !== null && gatewayPort !== 0 && port === gatewayPort && this.isLocal(ip, type)) return 'gateway';
    if (privateRanges.check(ip, type) && !this.options.allowPrivate) return 'private';
    return null;
  }

  /**
   * Resolves the URL's host (as the connection will) and screens every address: the refusal, or
   * 'unresolved' when the name has no address, or null.
   */
  async screen(url: URL): Promise<AddressRefusal | 'unresolved' | null> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = portOf(url);
    if (isIP(host) !== 0) return this.refusalOf(host, port);
    let addresses: LookupAddress[];
    try {
      addresses = await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))));
    } catch {
      return 'unresolved';
    }
    if (addresses.length === 0) return 'unresolved';
    for (const { address } of addresses) {
      const refusal = this.refusalOf(address, port);
      if (refusal) return refusal;
    }
    return null;
  }

  /**
   * A DNS lookup for the dispatcher of a connection to `url` (undici passes it to net/tls
   * `connect`): a name that resolves to a refused address fails the connection before any byte
   * is sent. (IP literals skip lookups: `screen` judged them.)
   */
  lookupFor(url: URL, onRefused?: (refusal: AddressRefusal) => void) {
    const port = portOf(url);
    return (hostname: string, options: LookupOptions | LookupAllOptions, callback: LookupCallback): void => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, options.all ? [] : '');
        for (const { address } of addresses) {
          const refusal = this.refusalOf(address, port);
          if (refusal) {
            onRefused?.(refusal);
            return callback(new RefusedAddressError(refusal), options.all ? [] : '');
          }
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      });
    };
  }

  private isLocal(ip: string, type: 'ipv4' | 'ipv6'): boolean {
    if (privateRanges.check(ip, type) && (type === 'ipv4' ? ip.startsWith('127.') || ip.startsWith('0.') : ip === '::1' || ip === '::')) return true;
    const local = this.options.localAddresses?.() ?? Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
    return local.some((address) => unwrap(address).address === ip);
  }
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}
