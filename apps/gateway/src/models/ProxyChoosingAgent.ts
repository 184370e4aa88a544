import { Agent, Dispatcher, ProxyAgent } from 'undici';
import { proxyForUrl, type ProxyEnv } from './proxyForUrl';

/**
 * A provider's HTTP dispatcher when a proxy variable is set (ProviderHttp): sends each request
 * through the proxy `proxyForUrl` picks for its origin (a redirect to
 * another origin is decided again), or straight through its own pool. undici's
 * EnvHttpProxyAgent reads NO_PROXY its own way, ignores ALL_PROXY, and does not offer h2 inside
 * the tunnel.
 */
export class ProxyChoosingAgent extends Dispatcher {
  private readonly direct: Agent;
  private readonly viaProxy = new Map<string, ProxyAgent>();
  /** The decision per origin: the environment was read once, so it cannot change. */
  private readonly byOrigin = new Map<string, Dispatcher>();

  constructor(
    private readonly settings: Agent.Options,
    private readonly env: ProxyEnv,
  ) {
    super();
    this.direct = new Agent(settings);
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(options.origin);
    let agent = this.byOrigin.get(origin);
    if (!agent) this.byOrigin.set(origin, (agent = this.agentFor(proxyForUrl(new URL(origin), this.env))));
    return agent.dispatch(options, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all(this.all().map((agent) => agent.close())).then(() => undefined);
    if (!callback) return closed;
    void closed.then(callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const err = typeof errOrCallback === 'function' ? null : (errOrCallback ?? null);
    const done = typeof errOrCallback === 'function' ? errOrCallback : callback;
    const destroyed = Promise.all(this.all().map((agent) => agent.destroy(err))).then(() => undefined);
    if (!done) return destroyed;
    void destroyed.then(done);
  }

  private agentFor(proxy: URL | null): Dispatcher {
    if (!proxy) return this.direct;
    let agent = this.viaProxy.get(proxy.href);
    if (!agent) {
      // `requestTls` is the TLS inside the tunnel: without `allowH2` there, ALPN offers only
      // http/1.1, and an h2-only endpoint refuses the handshake.
      const requestTls = { ...this.settings.connect, allowH2: true };
      agent = new ProxyAgent({ ...this.settings, uri: proxy.href, requestTls });
      this.viaProxy.set(proxy.href, agent);
    }
    return agent;
  }

  private all(): Dispatcher[] {
    return [this.direct, ...this.viaProxy.values()];
  }
}
