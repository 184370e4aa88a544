/**
 * The real gateway in process, as main.ts composes it (SqliteStore, systemClock, the provider
 * adapters from providerConfig with their circuit breaker, startServer on port 0), minus the
 * guardrails that would stop a benchmark (prompt rate, token budgets), which are not under test.
 */
import { defaultConfig, type AgentConfig, type GatewayConfig } from '../../apps/gateway/src/core/GatewayConfig';
import { Gateway } from '../../apps/gateway/src/core/Gateway';
import type { ModelRouter } from '../../apps/gateway/src/core/agent/ModelRouter';
import { createProviders, loadProviderConfig } from '../../apps/gateway/src/models/providerConfig';
import { SqliteStore } from '../../apps/gateway/src/storage/SqliteStore';
import { startServer, type RunningServer } from '../../apps/gateway/src/transport/httpServer';
import { systemClock } from '../../apps/gateway/src/transport/systemClock';

export interface BenchGatewayOptions {
  /** An OpenAI-compatible base URL (…/v1) for every route; none: the agent is not configured. */
  providerBaseUrl?: string;
  agent?: Partial<AgentConfig>;
  config?: Partial<Omit<GatewayConfig, 'agent'>>;
  /** SQLite file; default ':memory:'. */
  storeFile?: string;
}

export interface BenchGateway {
  gateway: Gateway;
  server: RunningServer;
  /** ws://…/ws */
  wsUrl: string;
  close(): Promise<void>;
}

const unlimited: Partial<AgentConfig> = {
  promptsPerMinute: 1_000_000,
  workspaceTokensPerDay: 1e12,
  linkTokensPerDay: 1e12,
  maxOutputTokens: 4096,
};

export async function startBenchGateway(options: BenchGatewayOptions): Promise<BenchGateway> {
  let models: ModelRouter | undefined;
  let closeModels = async () => {};
  if (options.providerBaseUrl) {
    const config = loadProviderConfig({ FLINT_PROVIDER: 'openai-chat', OPENAI_BASE_URL: options.providerBaseUrl, FLINT_MODEL_FAST: 'bench-model' });
    const providers = createProviders(config, { clock: systemClock });
    models = (route) => ({ provider: providers[route], model: 'bench-model', contextTokens: 128_000, supportsPrediction: false });
    closeModels = async () => void (await Promise.all(Object.values(providers).map((p) => p.close())));
  }
  const store = new SqliteStore(options.storeFile ?? ':memory:');
  const gateway = new Gateway({
    store,
    clock: systemClock,
    models,
    config: { ...options.config, agent: { ...defaultConfig.agent, ...unlimited, ...options.agent } },
  });
  const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: '/nonexistent', allowedOrigins: null, publicUrl: null, log: () => {} });
  return {
    gateway,
    server,
    wsUrl: `ws://127.0.0.1:${server.port}/ws`,
    close: async () => {
      await server.close();
      await closeModels();
      store.close();
    },
  };
}
