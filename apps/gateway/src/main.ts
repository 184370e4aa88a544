import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  clusterReadiness,
  createGateway,
  createProviders,
  defaultConfig,
  demoWorkspaceFiles,
  describeProviderConfig,
  editByInfill,
  EmbeddedProvider,
  FolderSync,
  linkUrl,
  loadProviderConfig,
  NodeDisk,
  probeSandbox,
  PostgresStore,
  ProviderConfigError,
  readiness,
  RedisBus,
  RedisLimits,
  SqliteStore,
  startServer,
  systemClock,
  systemRandom,
  TerminalService,
  workspaceFolders,
  type Log,
  type ModelRouter,
  type Readiness,
  type RouteConfig,
  type Store,
} from './index';
import { secretBoxAt } from './models/connect/secretBox';
import { WorkspaceModels } from './models/connect/WorkspaceModels';
import { allowPrivateModelUrls, ModelAddressPolicy } from './models/connect/modelAddressPolicy';
import { Playground } from './playground/Playground';
import { playgroundSettings, PlaygroundSettingsError } from './playground/playgroundSettings';
import { readPlaygroundTemplate, TemplateError } from './playground/playgroundTemplate';
import { Recordings } from './recording/Recordings';
import { Replays } from './recording/Replays';
import { createPlaygroundApi } from './transport/playgroundApi';
import { createRecordingApi } from './transport/recordingApi';
import { createReplayApi } from './transport/replayApi';
import { createWorkspaceModelApi } from './transport/workspaceModelApi';
import { isTerminalSettings } from '@flint/protocol';

/** The composition root: reads the environment, wires store, gateway and server, seeds the demo. */
const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;

const usage = `Usage: flint [--port N] [--host H] [folder]
       flint [--port N] [--host H] --playground <template folder | demo>
  folder        open this folder as a workspace, kept in sync with the disk both ways
                (without it: the demo workspace)
  --playground  every visitor of / gets a fresh copy of the template (FLINT_PLAYGROUND)`;
let args: ReturnType<typeof parseCommandLine>;
function parseCommandLine() {
  return parseArgs({ args: process.argv.slice(2), options: { port: { type: 'string' }, host: { type: 'string' }, playground: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true });
}
try {
  args = parseCommandLine();
} catch (error) {
  console.error(`${(error as Error).message}\n${usage}`);
  process.exit(2);
}
if (args.values.help) {
  console.log(usage);
  process.exit(0);
}
if (args.positionals.length > 1) {
  console.error(`Open one folder at a time.\n${usage}`);
  process.exit(2);
}
/** Where the command was typed (`npm start` runs us from the repository root). */
const invokedFrom = env.FLINT_INVOKED_FROM ?? process.cwd();
const folderArg = args.positionals[0] ?? null;

const dataDir = resolve(env.FLINT_DATA_DIR ?? '.flint-data');
const port = Number(args.values.port ?? env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number (0–65535), not "${args.values.port ?? env.PORT}".`);
  process.exit(2);
}
const host = args.values.host ?? env.FLINT_HOST ?? '127.0.0.1';
const webRoot = resolve(env.FLINT_WEB_ROOT ?? join(here, '../../web/dist'));
const allowedOrigins = env.FLINT_ALLOWED_ORIGINS ? env.FLINT_ALLOWED_ORIGINS.split(',').map((o) => o.trim()) : null;
const publicUrl = env.FLINT_PUBLIC_URL?.replace(/\/$/, '') ?? null;
// Unset (or empty): anyone who can reach the gateway may create a workspace, as on a laptop.
const createToken = env.FLINT_CREATE_TOKEN || null;
// A cluster (docs/cluster.md): gateways that share one PostgreSQL database, joined by Redis.
const databaseUrl = env.FLINT_DATABASE_URL || null;
const redisUrl = env.FLINT_REDIS_URL || null;
if (redisUrl && !databaseUrl) {
  console.error('FLINT_REDIS_URL joins gateways that share one database: set FLINT_DATABASE_URL (PostgreSQL) too.');
  process.exit(2);
}
if (redisUrl && folderArg) {
  console.error('A folder project is served by one gateway, next to its folder: unset FLINT_REDIS_URL to open a folder.');
  process.exit(2);
}

function readPlayground() {
  try {
    const settings = playgroundSettings(args.values.playground, env);
    if (!settings) return null;
    if (folderArg) throw new PlaygroundSettingsError('A playground copies its template for each visitor; it opens no folder project. Drop the folder, or --playground.');
    if (redisUrl) throw new PlaygroundSettingsError('A playground runs on one gateway: unset FLINT_REDIS_URL.');
    const folder = settings.templateFolder === 'demo' ? 'demo' : resolve(invokedFrom, settings.templateFolder);
    return { settings, template: readPlaygroundTemplate(folder) };
  } catch (error) {
    if (!(error instanceof PlaygroundSettingsError || error instanceof TemplateError)) throw error;
    console.error(`Playground: ${error.message}`);
    process.exit(2);
  }
}
const playgroundSetup = readPlayground();

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
function openStore(): Store {
  if (!databaseUrl) return new SqliteStore(join(dataDir, 'flint.sqlite'));
  try {
    // A read that stalls fails (4503, the tab retries) before the other gateways would take this
    // one for gone (5 s without a heartbeat) and end its turns.
    return new PostgresStore(databaseUrl, { timeoutMs: 4_000 });
  } catch (error) {
    console.error(`Cannot use the database at FLINT_DATABASE_URL: ${(error as Error).message}`);
    process.exit(2);
  }
}
const store = openStore();
const models = loadModels();
// A real project may hold many more files than the demo's limit.
// A folder's files are listed, not documents, until opened (issue 36): a large repository fits.
// A playground's model budgets: per workspace and for the whole gateway, per hour (decision 0032).
const config = folderArg
  ? { limits: { ...defaultConfig.limits, maxFiles: 100_000 } }
  : playgroundSetup
    ? { agent: { ...defaultConfig.agent, threadTokensPerWorkspaceHour: playgroundSetup.settings.tokensPerWorkspaceHour, instanceTokensPerHour: playgroundSetup.settings.tokensPerHour } }
    : {};
const gatewayId = systemRandom.id('g');
const bus = redisUrl ? new RedisBus({ url: redisUrl, gatewayId, log, prefix: env.FLINT_REDIS_PREFIX || undefined }) : undefined;
const limits = redisUrl ? new RedisLimits({ url: redisUrl, log, prefix: env.FLINT_REDIS_PREFIX || undefined }) : undefined;
/**
 * Terminals run in bubblewrap (decision 0033). Where it cannot run they are off, unless the
 * operator says, in so many words, to run them without a sandbox.
 */
function terminalMode(): ConstructorParameters<typeof TerminalService>[0]['mode'] {
  if (redisUrl) return { kind: 'off', reason: 'Terminals run next to a folder on one gateway; this gateway is one of a cluster.' };
  const probe = probeSandbox(join(dataDir, 'sandbox'));
  if (probe.ok) return { kind: 'sandbox' };
  if (env.FLINT_UNSAFE_TERMINAL_WITHOUT_SANDBOX === '1') {
    log('warn', 'TERMINALS RUN WITHOUT A SANDBOX (FLINT_UNSAFE_TERMINAL_WITHOUT_SANDBOX=1): anyone the owner lets type can read and change everything this user can', { why: probe.reason });
    return { kind: 'unsafe' };
  }
  log('warn', 'terminals are off', { why: probe.reason });
  return { kind: 'off', reason: probe.reason };
}
let folder: Awaited<ReturnType<typeof openFolder>> | null = null;
const terminals = new TerminalService({
  mode: terminalMode(),
  supportDir: join(dataDir, 'sandbox'),
  folder: workspaceFolders({
    folderProject: (workspaceId) => (folder && folder.workspaceId === workspaceId ? { root: folder.name, sync: folder.sync } : null),
    holdRoom: (workspaceId) => gateway.holdRoom(workspaceId),
    workRoot: join(dataDir, 'work'),
    dataDir,
    log,
    storageQuota: (workspaceId) => gateway.storageQuota(workspaceId),
  }),
  settings: {
    get: (workspaceId) => {
      const stored = store.getMeta(`terminal-settings:${workspaceId}`);
      const parsed: unknown = stored ? JSON.parse(stored) : null;
      if (!isTerminalSettings(parsed)) return null;
      // A playground's sandboxes never reach the network, whatever its visitors set (issue 37).
      return playgroundSetup ? { ...parsed, network: false } : parsed;
    },
    set: (workspaceId, settings) => store.setMeta(`terminal-settings:${workspaceId}`, JSON.stringify(settings)),
  },
  log,
});
// A model the workspace's owner connected from the agent panel goes first (issue 37).
const meta = { get: (key: string) => store.getMeta(key), set: (key: string, value: string) => store.setMeta(key, value) };
// Where a connected model may point: never link-local or metadata addresses, nor this gateway's
// own port; loopback and private ranges only when allowed (by default: when listening on loopback).
let listeningPort: number | null = port || null;
const modelAddresses = new ModelAddressPolicy({ allowPrivate: allowPrivateModelUrls(env, host), gatewayPort: () => listeningPort });
const workspaceModels = new WorkspaceModels({ meta, secrets: secretBoxAt(join(dataDir, 'secret-key')), clock: systemClock, log, addresses: modelAddresses });
const gateway = createGateway(config, { store, clock: systemClock, log, models: workspaceModels.router(models.router), bus, limits, terminals });
if (bus) {
  try {
    await bus.start(gateway.cluster);
  } catch (error) {
    console.error(`Cannot join the cluster at FLINT_REDIS_URL: ${(error as Error).message}`);
    process.exit(2);
  }
  log('info', 'joined the cluster', { gatewayId });
}

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

/**
 * Opens a folder as a workspace (issue 24): one workspace per folder, found again on the next
 * start (its owner token kept like the demo's), synced with the disk both ways.
 */
async function openFolder(folder: string): Promise<{ sync: FolderSync; release(): void; name: string; workspaceId: string; token: string }> {
  let disk: NodeDisk;
  try {
    // The gateway's data (its database, tokens) is never part of the folder's workspace, wherever it lies.
    disk = await NodeDisk.open(resolve(invokedFrom, folder), { excluded: [dataDir] });
  } catch (error) {
    console.error(`Cannot open ${folder}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is no such folder' : (error as Error).message}.`);
    process.exit(2);
  }
  const key = `folder-workspace:${disk.root}`;
  const tokenFile = join(dataDir, `folder-${createHash('sha256').update(disk.root).digest('hex').slice(0, 16)}-owner-token`);
  let workspaceId = store.getMeta(key);
  if (!workspaceId || !gateway.workspaceExists(workspaceId) || !existsSync(tokenFile)) {
    const created = gateway.createWorkspace(basename(disk.root) || disk.root);
    workspaceId = created.workspaceId;
    store.setMeta(key, workspaceId);
    writeFileSync(tokenFile, created.owner.token, { mode: 0o600 });
    chmodSync(tokenFile, 0o600);
  }
  const held = gateway.holdRoom(workspaceId)!;
  const sync = new FolderSync({ workspaceId, room: held.room, disk, bases: { get: (k) => store.getMeta(k), set: (k, v) => store.setMeta(k, v) }, log });
  const started = Date.now();
  await sync.start();
  log('info', 'folder opened', { root: disk.root, files: held.room.entries.size, ms: Date.now() - started });
  return { sync, release: () => held.release(), name: disk.root, workspaceId, token: readFileSync(tokenFile, 'utf8').trim() };
}

/**
 * Alone, the gateway is ready while its fast route is usable. In a cluster every gateway shares
 * the providers (an outage would take them all out of the balancer): it is ready while
 * PostgreSQL and Redis answer (`clusterReadiness`); the routes are reported, not required.
 */
function readinessView(query: URLSearchParams): Readiness | Promise<Readiness> {
  if (!bus || !(store instanceof PostgresStore)) return readiness(models.router);
  const pg = store;
  const deps = { bus, pingStore: () => pg.ping(), routes: () => readiness(models.router), timeoutMs: 1_500 };
  return clusterReadiness(deps, query.get('redis') === 'optional');
}

folder = folderArg ? await openFolder(folderArg) : null;
const projects = { get: (workspaceId: string) => (folder && folder.workspaceId === workspaceId ? folder.sync : null) };
const trustProxy = process.env.FLINT_TRUST_PROXY === '1';
const recordings = new Recordings((id) => gateway.holdRoom(id), systemClock);
const recordingApi = createRecordingApi(gateway, recordings);
const replayApi = createReplayApi(gateway, new Replays(gateway, systemClock)); // not in playground mode: a replay is a workspace outside its caps
const playground = playgroundSetup
  ? new Playground({ createWorkspace: (name, files) => gateway.createWorkspace(name, files), deleteWorkspace: (id) => (recordings.forget(id), gateway.deleteWorkspace(id)), sessionsIn: (id) => gateway.sessionsIn(id), setStorageQuota: (id, bytes) => gateway.setStorageQuota(id, bytes), meta }, playgroundSetup.template, systemClock, playgroundSetup.settings.config, log)
  : null;
playground?.start();

const modelApi = createWorkspaceModelApi(gateway, { models: workspaceModels, clock: systemClock, gatewayModel: () => models.router('fast')?.model ?? null, connectAllowed: !playground });
const running = await startServer({ gateway, port, host, webRoot, allowedOrigins, publicUrl, createToken, log, projects, trustProxy, readiness: readinessView,
  routes: playground && playgroundSetup ? [createPlaygroundApi(gateway, { playground, template: playgroundSetup.template, publicUrl, trustProxy }), modelApi, recordingApi] : [modelApi, recordingApi, replayApi] });
listeningPort = running.port;
if (folder) {
  console.log(`\n  Flint is running at ${running.url}\n  ${folder.name} (owner link): ${linkUrl(running.url, folder.workspaceId, folder.token)}\n  Data: ${dataDir}\n`);
} else if (playgroundSetup) {
  const { template, settings } = playgroundSetup;
  console.log(
    `\n  Flint playground is running at ${running.url}\n  Every visitor of ${running.url}/ gets a fresh copy of ${template.name} (${Object.keys(template.files).length} files), ` +
      `deleted after ${settings.config.idleMs / 60_000} min idle.\n  Data: ${dataDir}\n`,
  );
} else if (bus) {
  // One of several gateways: workspaces are made through POST /workspaces, not seeded per process.
  // Through the balancer, not this gateway: the link returned names the address the request
  // came to (or FLINT_PUBLIC_URL), and a tab opened on one gateway's own address bypasses it.
  const auth = createToken ? ` -H 'authorization: Bearer <FLINT_CREATE_TOKEN>'` : '';
  const curl = (origin: string) => `    curl -X POST -H 'content-type: application/json'${auth} -d '{"name":"My project","seed":"demo"}' ${origin}/api/workspaces\n`;
  console.log(
    `\n  Flint gateway ${gatewayId} is running at ${running.url} (cluster: PostgreSQL + Redis)\n` +
      (publicUrl
        ? `  Create a workspace through the load balancer, then open the url it returns:\n${curl(publicUrl)}`
        : `  FLINT_PUBLIC_URL is not set: set it to the load balancer's address, so that the links gateways return name it.\n` +
          `  Create a workspace through the load balancer, then open the url it returns:\n${curl('http://<load balancer>')}`),
  );
} else {
  const demoUrl = demoOwnerLink(running.url);
  console.log(`\n  Flint is running at ${running.url}\n  Demo workspace (owner link): ${demoUrl}\n  Data: ${dataDir}\n`);
}

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('info', 'shutting down', { signal });
  // What people typed reaches the disk before the process goes.
  playground?.stop();
  await terminals.close();
  await folder?.sync.stop();
  folder?.release();
  await running.close();
  await bus?.close();
  await limits?.close();
  await models.close();
  await workspaceModels.close();
  store.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
