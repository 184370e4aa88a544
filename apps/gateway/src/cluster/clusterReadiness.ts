import type { Readiness } from '../core/agent/ModelRouter';
import type { RedisBus } from './RedisBus';

export interface ClusterReadiness extends Readiness {
  /** What works less well than it should, though the gateway serves: `redis` (alone until it is back). */
  degraded: string[];
  store: { ok: boolean; ms: number | null };
  cluster: { gateway: string; connected: boolean; redisMs: number | null; gateways: number };
}

export interface ClusterReadinessDeps {
  bus: RedisBus;
  /** Resolves once the store answers a trivial query (after what was asked before it). */
  pingStore(): Promise<void>;
  /** The model routes, reported: every gateway shares the providers, so they do not decide. */
  routes(): Readiness;
  /** How long each dependency may take to answer. */
  timeoutMs: number;
}

/**
 * What `/readyz` means for a gateway of a cluster (docs/cluster.md, "Readiness"), decided per
 * dependency, each asked now, not remembered:
 *
 * - PostgreSQL answers a query within the timeout, or the gateway is not ready: a new tab could
 *   not even have its link checked.
 * - Redis answers a PING on both connections within the timeout, or the gateway is not ready: a
 *   gateway that does not hear the others (down, paused, overloaded) would show its tabs a
 *   document others are changing. With `?redis=optional` it is ready anyway and says `degraded`:
 *   the balancer asks that only when no gateway is ready, i.e. when Redis itself is out, and
 *   each gateway serving its own tabs beats refusing every tab.
 * - Model providers are reported, never required.
 */
export async function clusterReadiness(deps: ClusterReadinessDeps, redisOptional: boolean): Promise<ClusterReadiness> {
  const [storeMs, redisMs] = await Promise.all([timed(deps.pingStore(), deps.timeoutMs), deps.bus.roundTripMs(deps.timeoutMs)]);
  const degraded = redisMs === null ? ['redis'] : [];
  const store = { ok: storeMs !== null, ms: storeMs === null ? null : Math.round(storeMs) };
  return {
    ...deps.routes(),
    ready: store.ok && (redisMs !== null || redisOptional),
    degraded,
    store,
    cluster: {
      gateway: deps.bus.gatewayId,
      connected: redisMs !== null,
      redisMs: redisMs === null ? null : Math.round(redisMs),
      gateways: deps.bus.aliveGateways(),
    },
  };
}

/** How long `work` took, or null when it failed or took longer than `timeoutMs`. */
async function timed(work: Promise<void>, timeoutMs: number): Promise<number | null> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
  try {
    return await Promise.race([work.then(() => performance.now() - started), late]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    work.catch(() => {}); // answered after the timeout: already reported as not answering
  }
}
