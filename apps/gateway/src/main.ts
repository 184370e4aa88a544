import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readiness, type ModelRouter } from './core/agent/ModelRouter';
import { Gateway } from './core/Gateway';
import type { Log } from './core/GatewayContext';
import { editByInfill } from './models/embedded/editByInfill';
import { EmbeddedProvider } from './models/embedded/EmbeddedProvider';
import { createProviders, describeProviderConfig, loadProviderConfig, ProviderConfigError, type RouteConfig } from './models/providerConfig';
import { demoWorkspaceFiles } from './seed/demoWorkspace';
import { SqliteStore } from './storage/SqliteStore';
import { startServer } from './transport/httpServer';
import { linkUrl } from './transport/restApi';
import { systemClock } from './transport/systemClock';

/** The composition root: reads the environment, wires store, gateway and server, seeds the demo. */
const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;
const dataDir = resolve(env.FLINT_DATA_DIR ?? '.flint-data');
const port = Number(env.PORT ?? 3000);
const host = env.FLINT_HOST ?? '127.0.0.1';
const webRoot = resolve(env.FLINT_WEB_ROOT ?? join(here, '../../web/dist'));
const allowedOrigins = env.FLINT_ALLOWED_ORIGINS ? env.FLINT_ALLOWED_ORIGINS.split(',').map((o) => o.trim()) : null;
const publicUrl = env.FLINT_PUBLIC_URL?.replace(/\/$/, '') ?? null;
// Unset (or empty): anyone who can reach the gateway may create a workspace, as on a laptop.
const createToken = env.FLINT_CREATE_TOKEN || null;

const log: Log = (level, message, fields) => {
  const line = JSON.stringify({ time: new Date().toISOString(), level, message, ...fields });
  if (level === 'info') console.log(line);
  else console.error(line);
};

/** The bundled model (issue 5 ships it); any GGUF path works via FLINT_MODEL_FAST etc. */
const defaultModelPath = resolve(here, '../../../models/flint-tiny.gguf');
const embeddedModelPath = (route: RouteConfig) => (route.model === 'default' ? defaultModelPath : resolve(route.model));

function loadModels(): { router: ModelRouter; close: () => Promise<void> } {
  let config;
  try {
    config = loadProviderConfig(env, env.FLINT_CONFIG ? readFileSync(env.FLINT_CONFIG, 'utf8') : undefined);
  } catch (error) {
    if (error instanceof ProviderConfigError) {
      console.error(`Model configuration: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  log('info', 'models', { routes: describeProviderConfig(config) });
  const providers = createProviders(config, {
    clock: systemClock,
    log,
    embedded: (route) => {
      if (route.model !== 'default') return new EmbeddedProvider({ modelPath: embeddedModelPath(route) });
      // The bundled model was trained on raw code (models/MODEL_CARD.md): no chat template.
      const provider = new EmbeddedProvider({ modelPath: defaultModelPath, promptTemplate: (messages) => messages.at(-1)?.content ?? '' });
      return editByInfill(provider);
    },
  });
  const contextTokens = Number(env.FLINT_CONTEXT_TOKENS ?? 128_000);
  const router: ModelRouter = (route) => {
    const routeConfig = config.routes[route];
    return {
      provider: providers[route],
      model: routeConfig.kind === 'embedded' ? 'flint-tiny' : routeConfig.model,
      contextTokens: routeConfig.kind === 'embedded' ? 2048 : contextTokens,
      supportsPrediction: routeConfig.supportsPrediction,
      supportsTools: routeConfig.supportsTools,
      fimTemplate: routeConfig.fimTemplate,
      endpoint: providers[route].breaker,
    };
  };
  return { router, close: async () => void (await Promise.all(Object.values(providers).map((p) => p.close()))) };
}

mkdirSync(dataDir, { recursive: true });
const store = new SqliteStore(join(dataDir, 'flint.sqlite'));
const models = loadModels();
const gateway = new Gateway({ store, clock: systemClock, log, models: models.router });

/**
 * Seeds the demo workspace once. Its owner token is kept in the data folder (mode 0600), the
 * one token stored in clear: it is what lets `npm start` print the same working link every time.
 */
function demoOwnerLink(origin: string): string {
  const tokenFile = join(dataDir, 'demo-owner-token');
  let workspaceId = store.getMeta('demo_workspace_id');
  if (!workspaceId || !existsSync(tokenFile)) {
    const created = gateway.createWorkspace('Tally (demo)', demoWorkspaceFiles);
    workspaceId = created.workspaceId;
    store.setMeta('demo_workspace_id', workspaceId);
    writeFileSync(tokenFile, created.owner.token, { mode: 0o600 });
    chmodSync(tokenFile, 0o600);
  }
  return linkUrl(origin, workspaceId, readFileSync(tokenFile, 'utf8').trim());
}

const running = await startServer({ gateway, port, host, webRoot, allowedOrigins, publicUrl, createToken, log, readiness: () => readiness(models.router) });
const demoUrl = demoOwnerLink(running.url);
console.log(`\n  Flint is running at ${running.url}\n  Demo workspace (owner link): ${demoUrl}\n  Data: ${dataDir}\n`);

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('info', 'shutting down', { signal });
  await running.close();
  await models.close();
  store.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
