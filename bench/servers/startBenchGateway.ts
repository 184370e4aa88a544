/**
 * The real gateway in process, as main.ts composes it (SqliteStore in a file, systemClock, the
 * provider adapters from providerConfig with their circuit breaker, startServer on port 0), minus the
 * guardrails that would stop a benchmark (prompt rate, token budgets), which are not under test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createGateway,
  createProviders,
  defaultConfig,
  EmbeddedProvider,
  loadProviderConfig,
  SqliteStore,
  startServer,
  systemClock,
  type AgentConfig,
  type CompletionConfig,
  type FimMode,
  type Gateway,
  type GatewayConfig,
  type ModelRouter,
  type RunningServer,
  type TerminalHost,
} from '@flint/gateway';

export interface BenchGatewayOptions {
  /** An OpenAI-compatible base URL (…/v1) for every route; none: the agent is not configured. */
  providerBaseUrl?: string;
  agent?: Partial<AgentConfig>;
  config?: Partial<Omit<GatewayConfig, 'agent'>>;
  /**
   * The complete route (autocomplete): an OpenAI-compatible FIM server with a template, or the
   * embedded model (a GGUF path) as main.ts builds it. None: the complete route follows the fast one.
   */
  complete?: { kind: 'openai-chat'; baseUrl: string; model: string; fimTemplate: FimMode } | { kind: 'embedded'; modelPath: string };
  /** Autocomplete limits (the per-session request rate is raised by default: a guardrail, not under test). */
  completion?: Partial<CompletionConfig>;
  /**
   * The SQLite file. Default: \`flint.sqlite\` in a fresh temporary folder, removed on close — a
   * file in WAL mode, as main.ts keeps its data folder (an in-memory database skips the WAL's
   * writes: ~60 µs less per append after an idle spell, ~13 µs warm).
   */
  storeFile?: string;
  /** Serve this built web app (apps/web/dist) as `npm start` does; default: no web app. */
  webRoot?: string;
  /** The routed model's context window (the output cap is a quarter of it); default 128k. */
  contextTokens?: number;
  /** Shared terminals (B15); none by default. */
  terminals?: TerminalHost;
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
  if (options.providerBaseUrl || options.complete) {
    const env: Record<string, string> = options.providerBaseUrl
      ? { FLINT_PROVIDER: 'openai-chat', OPENAI_BASE_URL: options.providerBaseUrl, FLINT_MODEL_FAST: 'bench-model' }
      : {};
    const complete = options.complete;
    const file = complete
      ? JSON.stringify({
          routes: {
            complete: complete.kind === 'embedded' ? { kind: 'embedded', model: resolve(complete.modelPath) } : { kind: 'openai-chat', baseUrl: complete.baseUrl, model: complete.model, fimTemplate: complete.fimTemplate },
          },
        })
      : undefined;
    const config = loadProviderConfig(env, file);
    // As main.ts: an embedded route runs its GGUF in a model host process, started on first use.
    const providers = createProviders(config, { clock: systemClock, embedded: (route) => new EmbeddedProvider({ modelPath: resolve(route.model) }) });
    models = (route) => {
      const r = config.routes[route];
      const embedded = r.kind === 'embedded';
      const model = route === 'complete' && complete ? (embedded ? 'flint-tiny' : r.model) : 'bench-model';
      return { provider: providers[route], model, contextTokens: embedded ? 2048 : (options.contextTokens ?? 128_000), supportsPrediction: false, supportsTools: r.supportsTools, fimTemplate: r.fimTemplate };
    };
    closeModels = async () => void (await Promise.all(Object.values(providers).map((p) => p.close())));
  }
  const dataDir = options.storeFile ? null : mkdtempSync(join(tmpdir(), 'flint-bench-gateway-'));
  const store = new SqliteStore(options.storeFile ?? join(dataDir!, 'flint.sqlite'));
  const gateway = createGateway(
    { ...options.config, agent: { ...defaultConfig.agent, ...unlimited, ...options.agent }, completion: { requestsPerSecond: 10_000, ...options.completion } },
    { store, clock: systemClock, models, terminals: options.terminals },
  );
  const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot: options.webRoot ?? '/nonexistent', allowedOrigins: null, publicUrl: null, log: () => {} });
  return {
    gateway,
    server,
    wsUrl: `ws://127.0.0.1:${server.port}/ws`,
    close: async () => {
      await server.close();
      await closeModels();
      store.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
