/**
 * `/readyz` on a real server (port 0): each route's model, host and breaker, 200 while the fast
 * route is usable and 503 while it is not. `/healthz` stays a liveness check throughout.
 * `/metrics` reports each route's breaker too.
 */
import { FakeClock } from '@flint/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { readiness, type ModelRouter } from '../core/agent/ModelRouter';
import { createGateway } from '../index';
import { CircuitBreaker } from '../models/CircuitBreaker';
import { ProviderError, type ModelProvider } from '../core/ports/ModelProvider';
import { createProviders, loadProviderConfig } from '../models/providerConfig';
import { SqliteStore } from '../storage/SqliteStore';
import { startServer, type RunningServer } from './httpServer';
import { systemClock } from './systemClock';
import { systemRandom } from './systemRandom';

const provider: ModelProvider = { kind: 'test', close: async () => undefined, stream: async function* () {} };

let server: RunningServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function serve(readinessOf?: () => ReturnType<typeof readiness>, models?: ModelRouter) {
  const gateway = createGateway({}, { store: new SqliteStore(':memory:'), clock: systemClock, random: systemRandom, models });
  server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent-web-root', allowedOrigins: null, publicUrl: null, log: () => {}, readiness: readinessOf });
  return async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${server!.port}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

describe('/readyz', () => {
  it("reports each route's model, host and breaker, and answers 503 while the fast route's breaker is open", async () => {
    const clock = new FakeClock();
    const cerebras = new CircuitBreaker({ clock, failureThreshold: 2, cooldownMs: 30_000, host: 'api.cerebras.ai' });
    const openai = new CircuitBreaker({ clock, host: 'api.openai.com' });
    const router: ModelRouter = (route) =>
      route === 'complete'
        ? null
        : { provider, model: `${route}-model`, contextTokens: 128_000, supportsPrediction: false, endpoint: route === 'fast' ? cerebras : openai };
    const get = await serve(() => readiness(router));

    expect(await get('/readyz')).toEqual({
      status: 200,
      body: {
        ready: true,
        routes: {
          fast: { model: 'fast-model', host: 'api.cerebras.ai', breaker: 'closed', retryInMs: 0, usable: true },
          deep: { model: 'deep-model', host: 'api.openai.com', breaker: 'closed', retryInMs: 0, usable: true },
          complete: { model: null, host: null, breaker: null, retryInMs: 0, usable: false },
        },
      },
    });

    for (let i = 0; i < 2; i++) cerebras.onFailure(new ProviderError('network', 'dropped'));
    clock.advance(10_000);
    const open = await get('/readyz');
    expect(open.status).toBe(503);
    expect(open.body).toMatchObject({
      ready: false,
      routes: { fast: { breaker: 'open', retryInMs: 20_000, usable: false }, deep: { breaker: 'closed', usable: true } },
    });
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { ok: true } });

    // Half-open lets the next request through as a trial: ready again.
    clock.advance(20_000);
    expect(await get('/readyz')).toMatchObject({ status: 200, body: { ready: true, routes: { fast: { breaker: 'half-open', retryInMs: 0, usable: true } } } });
  });

  it('answers 503 when no model serves the fast route', async () => {
    const get = await serve();
    expect(await get('/readyz')).toMatchObject({ status: 503, body: { ready: false, routes: { fast: { model: null, usable: false } } } });
  });

  it("reports two models on one endpoint by route: the fast model's open breaker leaves the deep model usable, in /readyz and /metrics", async () => {
    const clock = new FakeClock();
    const file = JSON.stringify({ routes: { complete: { kind: 'embedded' } }, breaker: { failureThreshold: 2, cooldownMs: 30_000 } });
    const config = loadProviderConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', FLINT_MODEL_FAST: 'small', FLINT_MODEL_DEEP: 'large' }, file);
    const providers = createProviders(config, { clock, embedded: () => provider });
    const router: ModelRouter = (route) => ({
      provider: providers[route],
      model: config.routes[route].model,
      contextTokens: 128_000,
      supportsPrediction: false,
      endpoint: providers[route].breaker,
    });
    const get = await serve(() => readiness(router), router);
    for (let i = 0; i < 2; i++) providers.fast.breaker.onFailure(new ProviderError('overloaded', 'model overloaded'));

    const view = await get('/readyz');
    expect(view.status).toBe(503);
    expect(view.body.routes).toMatchObject({
      fast: { model: 'small', host: '127.0.0.1:9', breaker: 'open', usable: false },
      deep: { model: 'large', host: '127.0.0.1:9', breaker: 'closed', usable: true },
    });
    const metrics = await (await fetch(`http://127.0.0.1:${server!.port}/metrics`)).text();
    expect(metrics).toContain('flint_route_breaker_state{route="fast",state="open"} 1');
    expect(metrics).toContain('flint_route_breaker_state{route="deep",state="closed"} 1');
    expect(metrics).toContain('flint_route_breaker_state{route="complete",state="closed"} 1');
    await Promise.all([providers.fast.close(), providers.complete.close()]);
  });
});
