/**
 * Which provider serves each route, from the environment and an optional JSON file, and the
 * ModelProviders built from that. `loadProviderConfig` is pure (it gets the file's text, not its
 * path) so every rule below is unit tested; keys stay in the returned config and are never
 * logged — use `describeProviderConfig` for anything printed.
 *
 * Environment:
 * - `FLINT_PROVIDER`: openai-responses | openai-chat | embedded, for every route.
 * - `OPENAI_API_KEY`, `OPENAI_BASE_URL`: with a key and no base URL → openai-responses at
 *   https://api.openai.com/v1; with a base URL → openai-chat there (Cerebras, Groq, vLLM,
 *   llama-server, Ollama, LM Studio); with neither → embedded.
 * - `FLINT_MODEL_FAST`, `FLINT_MODEL_DEEP`, `FLINT_MODEL_COMPLETE`: model per route; deep and
 *   complete default to the fast route's model.
 * - `FLINT_FIM_TEMPLATE`, `FLINT_INFILL_URL`: how the complete route fills the middle (below).
 * - `FLINT_CONFIG`: path of a JSON file `{ "routes": { "fast": {...}, "deep": {...} },
 *   "breaker": {...} }`. A route there wins over the environment; its key comes from `apiKeyEnv`
 *   (the name of an environment variable) or, discouraged, a literal `apiKey`.
 *
 * Autocomplete (the complete route): `fimTemplate` is one of qwen, deepseek, starcoder2,
 * codestral, codellama (a raw prompt to `/v1/completions`), `infill` (the provider's native
 * fill-in-the-middle: llama-server's `/infill` at `infillEndpoint`, or the embedded model), or
 * `chat` (a chat prompt, for models without FIM tokens). Unset: embedded → infill; a model name
 * that names a FIM family (e.g. "qwen2.5-coder-7b") → its template; anything else → chat.
 * `infillEndpoint` alone implies `infill`.
 *
 * Tool calling (the agent thread): `supportsTools` is on for openai-responses and openai-chat
 * routes; a route whose model cannot call tools (many local models behind a Chat endpoint) sets
 * it to false in the file. The embedded model never calls tools.
 */
import type { Log } from '../core/ports/Log';
import type { ModelProvider, Route } from '../core/ports/ModelProvider';
import { ProviderError } from '../core/ports/ModelProvider';
import { ChatCompletionsProvider, type ChatCompletionsOptions } from './ChatCompletionsProvider';
import { CircuitBreaker, withCircuitBreaker, type GuardedProvider } from './CircuitBreaker';
import { fimModes, type FimMode } from '../core/complete/Infiller';
import { ResponsesProvider } from './ResponsesProvider';

export type ProviderKind = 'openai-responses' | 'openai-chat' | 'embedded';

export interface RouteConfig {
  kind: ProviderKind;
  /** Null for embedded. */
  baseUrl: string | null;
  apiKey: string | null;
  /** Sent as `model`; for embedded, a GGUF path or "default" (the bundled model). */
  model: string;
  /** Send `request.prediction` as a predicted output (Chat Completions only). */
  supportsPrediction: boolean;
  /** The model takes `tools` and calls them (see the header). */
  supportsTools: boolean;
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  transport?: 'websocket' | 'sse' | 'auto';
  store?: boolean;
  idleTimeoutMs?: number;
  /** How autocomplete fills the middle (complete route); see the header. */
  fimTemplate?: FimMode;
  /** llama-server's `/infill` URL, e.g. "http://127.0.0.1:8080/infill" (openai-chat only). */
  infillEndpoint?: string;
}

export interface ProviderConfig {
  routes: Record<Route, RouteConfig>;
  breaker: { failureThreshold: number; cooldownMs: number };
}

/** A configuration mistake, reported at startup with what to fix. */
export class ProviderConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderConfigError';
  }
}

export const openAIBaseUrl = 'https://api.openai.com/v1';
const routes: Route[] = ['fast', 'deep', 'complete'];
const kinds: ProviderKind[] = ['openai-responses', 'openai-chat', 'embedded'];
const openAIModels: Record<Route, string> = { fast: 'gpt-5.3-codex-spark', deep: 'gpt-5.5', complete: 'gpt-5.4-mini' };

type Env = Record<string, string | undefined>;

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function kindOf(value: unknown, where: string): ProviderKind {
  if (kinds.includes(value as ProviderKind)) return value as ProviderKind;
  throw new ProviderConfigError(`${where} is "${String(value)}"; use one of ${kinds.join(', ')}.`);
}

function fromEnv(env: Env): Record<Route, RouteConfig> {
  const apiKey = nonEmpty(env.OPENAI_API_KEY);
  const baseUrl = nonEmpty(env.OPENAI_BASE_URL);
  const explicit = nonEmpty(env.FLINT_PROVIDER);
  const kind: ProviderKind = explicit
    ? kindOf(explicit, 'FLINT_PROVIDER')
    : baseUrl
      ? 'openai-chat'
      : apiKey
        ? 'openai-responses'
        : 'embedded';
  const fastModel = nonEmpty(env.FLINT_MODEL_FAST);
  const models: Record<Route, string | null> = {
    fast: fastModel,
    deep: nonEmpty(env.FLINT_MODEL_DEEP) ?? fastModel,
    complete: nonEmpty(env.FLINT_MODEL_COMPLETE) ?? fastModel,
  };
  const result = {} as Record<Route, RouteConfig>;
  for (const route of routes) {
    const model = models[route] ?? (kind === 'openai-responses' ? openAIModels[route] : 'default');
    result[route] = baseRoute(kind, model, baseUrl, apiKey);
  }
  const fimTemplate = nonEmpty(env.FLINT_FIM_TEMPLATE);
  if (fimTemplate) result.complete.fimTemplate = fimModeOf(fimTemplate, 'FLINT_FIM_TEMPLATE');
  const infillEndpoint = nonEmpty(env.FLINT_INFILL_URL);
  if (infillEndpoint) result.complete.infillEndpoint = infillEndpoint;
  return result;
}

function fimModeOf(value: unknown, where: string): FimMode {
  if (fimModes.includes(value as FimMode)) return value as FimMode;
  throw new ProviderConfigError(`${where} is "${String(value)}"; use one of ${fimModes.join(', ')}.`);
}

/** Whether the route can fill the middle the way it is configured to; a sentence to fix it if not. */
function checkFim(route: Route, r: RouteConfig): void {
  if (r.infillEndpoint !== undefined) {
    if (r.kind !== 'openai-chat') throw new ProviderConfigError(`routes.${route}.infillEndpoint needs kind openai-chat (llama-server); this route is ${r.kind}.`);
    if (!URL.canParse(r.infillEndpoint)) throw new ProviderConfigError(`The infill endpoint "${r.infillEndpoint}" is not a URL: write it like http://127.0.0.1:8080/infill.`);
    r.fimTemplate ??= 'infill';
  }
  const mode = r.fimTemplate;
  if (mode === undefined || mode === 'chat') return;
  if (mode === 'infill') {
    if (r.kind === 'embedded' || r.infillEndpoint !== undefined) return;
    throw new ProviderConfigError(`routes.${route} uses fimTemplate "infill" but has no infillEndpoint (llama-server's /infill URL).`);
  }
  if (r.kind !== 'openai-chat') {
    throw new ProviderConfigError(`routes.${route} uses the ${mode} FIM template, which needs an OpenAI-compatible server (kind openai-chat) for raw prompts; this route is ${r.kind}.`);
  }
}

function baseRoute(kind: ProviderKind, model: string, baseUrl: string | null, apiKey: string | null): RouteConfig {
  if (kind === 'embedded') return { kind, baseUrl: null, apiKey: null, model, supportsPrediction: false, supportsTools: false };
  const url = baseUrl ?? openAIBaseUrl;
  if (!URL.canParse(url)) throw new ProviderConfigError(`The base URL "${url}" is not a URL: write it like https://api.cerebras.ai/v1.`);
  // OpenAI's own Chat Completions supports predicted outputs; OpenAI-compatible servers mostly do not.
  const supportsPrediction = kind === 'openai-chat' && new URL(url).host === 'api.openai.com';
  return { kind, baseUrl: url, apiKey, model, supportsPrediction, supportsTools: true };
}

function parseFile(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ProviderConfigError(`FLINT_CONFIG is not valid JSON (${(error as SyntaxError).message}).`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ProviderConfigError('FLINT_CONFIG must hold a JSON object like {"routes": {"fast": {...}}}.');
  }
  return parsed as Record<string, unknown>;
}

function routeFromFile(raw: unknown, route: Route, base: RouteConfig, env: Env): RouteConfig {
  if (typeof raw !== 'object' || raw === null) throw new ProviderConfigError(`FLINT_CONFIG routes.${route} must be an object.`);
  const r = raw as Record<string, unknown>;
  const kind = r.kind === undefined ? base.kind : kindOf(r.kind, `FLINT_CONFIG routes.${route}.kind`);
  const keyEnv = typeof r.apiKeyEnv === 'string' ? r.apiKeyEnv : null;
  if (keyEnv && nonEmpty(env[keyEnv]) === null) {
    throw new ProviderConfigError(`FLINT_CONFIG routes.${route}.apiKeyEnv names ${keyEnv}, which is not set.`);
  }
  const apiKey = keyEnv ? nonEmpty(env[keyEnv]) : typeof r.apiKey === 'string' ? r.apiKey : kind === base.kind ? base.apiKey : null;
  const baseUrl = typeof r.baseUrl === 'string' ? r.baseUrl : kind === base.kind ? base.baseUrl : null;
  const model = typeof r.model === 'string' ? r.model : kind === base.kind ? base.model : kind === 'openai-responses' ? openAIModels[route] : 'default';
  const config = baseRoute(kind, model, baseUrl, apiKey);
  if (typeof r.supportsPrediction === 'boolean') config.supportsPrediction = r.supportsPrediction;
  if (typeof r.supportsTools === 'boolean') {
    if (r.supportsTools && kind === 'embedded') throw new ProviderConfigError(`FLINT_CONFIG routes.${route}.supportsTools: the embedded model cannot call tools; remove the setting.`);
    config.supportsTools = r.supportsTools;
  }
  if (r.maxTokensField === 'max_tokens' || r.maxTokensField === 'max_completion_tokens') config.maxTokensField = r.maxTokensField;
  if (r.transport === 'websocket' || r.transport === 'sse' || r.transport === 'auto') config.transport = r.transport;
  if (typeof r.store === 'boolean') config.store = r.store;
  if (typeof r.idleTimeoutMs === 'number') config.idleTimeoutMs = r.idleTimeoutMs;
  if (r.fimTemplate !== undefined) config.fimTemplate = fimModeOf(r.fimTemplate, `FLINT_CONFIG routes.${route}.fimTemplate`);
  else if (kind === base.kind && base.fimTemplate !== undefined) config.fimTemplate = base.fimTemplate;
  if (typeof r.infillEndpoint === 'string') config.infillEndpoint = r.infillEndpoint;
  else if (kind === base.kind && base.infillEndpoint !== undefined) config.infillEndpoint = base.infillEndpoint;
  return config;
}

/** The route configuration from `env` and, when FLINT_CONFIG is set, that file's text. */
export function loadProviderConfig(env: Env, file?: string): ProviderConfig {
  const config: ProviderConfig = { routes: fromEnv(env), breaker: { failureThreshold: 5, cooldownMs: 30_000 } };
  if (file !== undefined) {
    const parsed = parseFile(file);
    const fileRoutes = (parsed.routes ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(fileRoutes)) {
      if (!routes.includes(name as Route)) throw new ProviderConfigError(`FLINT_CONFIG names an unknown route "${name}"; routes are ${routes.join(', ')}.`);
      config.routes[name as Route] = routeFromFile(fileRoutes[name], name as Route, config.routes[name as Route], env);
    }
    const breaker = (parsed.breaker ?? {}) as Record<string, unknown>;
    if (typeof breaker.failureThreshold === 'number') config.breaker.failureThreshold = breaker.failureThreshold;
    if (typeof breaker.cooldownMs === 'number') config.breaker.cooldownMs = breaker.cooldownMs;
  }
  for (const route of routes) {
    const r = config.routes[route];
    checkFim(route, r);
    if (r.kind === 'openai-responses' && !r.apiKey) {
      throw new ProviderConfigError(`The ${route} route uses the OpenAI Responses API but has no key: set OPENAI_API_KEY.`);
    }
  }
  return config;
}

/** The config with keys reduced to whether they are set: the only form fit for logs. */
export function describeProviderConfig(config: ProviderConfig): Record<Route, Omit<RouteConfig, 'apiKey'> & { apiKey: 'set' | 'none' }> {
  const described = {} as Record<Route, Omit<RouteConfig, 'apiKey'> & { apiKey: 'set' | 'none' }>;
  for (const route of routes) described[route] = { ...config.routes[route], apiKey: config.routes[route].apiKey ? 'set' : 'none' };
  return described;
}

export interface ProviderFactories {
  /** Builds the embedded adapter; without it, embedded routes answer `not_configured`. */
  embedded?: (route: RouteConfig) => ModelProvider;
  clock?: { now(): number };
  /** Where each provider failure is logged, one warn line each (route, host, status, request id…). */
  log?: Log;
  /** How Chat Completions adapters connect (a workspace's model connection screens addresses, follows no redirects). */
  chatHttp?: ChatCompletionsOptions['http'];
}

/** The agent routes a person can switch between; autocomplete has no other route to offer. */
const otherAgentRoute: Partial<Record<Route, Route>> = { fast: 'deep', deep: 'fast' };

/**
 * One ModelProvider per route, behind its route's circuit breaker. Routes with the same
 * endpoint and key share one adapter (one connection pool): closing it closes it for each.
 *
 * The breaker is keyed by what a route asks for — its endpoint (the base URL's origin, an
 * embedded model's file) and its model — not by endpoint alone: one model on a host can be
 * overloaded, broken or withdrawn while another there answers, and a failing fast model must not
 * shut off a healthy deep one. Routes that ask one endpoint for one model share a breaker (a
 * second route would only repeat the failures), whose refusal names the route that asked and
 * the routes it shares; switching is offered to a route behind another breaker. The price: a
 * host that is down entirely fails each of its models' breakers in turn.
 */
export function createProviders(config: ProviderConfig, factories: ProviderFactories = {}): Record<Route, GuardedProvider> {
  const breakerOf = {} as Record<Route, CircuitBreaker>;
  const breakers = new Map<string, CircuitBreaker>();
  for (const route of routes) {
    const r = config.routes[route];
    const key = r.baseUrl ? JSON.stringify([new URL(r.baseUrl).origin, r.model]) : `embedded:${r.model}`;
    if (!breakers.has(key)) breakers.set(key, new CircuitBreaker({ clock: factories.clock ?? Date, host: hostOf(r), ...config.breaker }));
    breakerOf[route] = breakers.get(key)!;
  }
  const adapters = new Map<string, ModelProvider>();
  const result = {} as Record<Route, GuardedProvider>;
  for (const route of routes) {
    const r = config.routes[route];
    const key = JSON.stringify([r.kind, r.baseUrl, r.apiKey, r.transport, r.store, r.maxTokensField, r.supportsPrediction, r.idleTimeoutMs, r.infillEndpoint, r.kind === 'embedded' ? r.model : null]);
    let adapter = adapters.get(key);
    if (!adapter) adapters.set(key, (adapter = build(r, route, factories)));
    const other = otherAgentRoute[route];
    result[route] = withCircuitBreaker(adapter, {
      breaker: breakerOf[route],
      route,
      sharedWith: routes.filter((o) => o !== route && breakerOf[o] === breakerOf[route]),
      switchTo: other && breakerOf[other] !== breakerOf[route] ? { route: other, breaker: breakerOf[other] } : null,
      log: factories.log,
    });
  }
  return result;
}

/** How messages and logs name where a route's requests go. */
function hostOf(r: RouteConfig): string {
  return r.baseUrl ? new URL(r.baseUrl).host : 'embedded';
}

function build(r: RouteConfig, route: Route, factories: ProviderFactories): ModelProvider {
  const name = hostOf(r);
  switch (r.kind) {
    case 'openai-responses':
      return new ResponsesProvider({ baseUrl: r.baseUrl!, apiKey: r.apiKey!, name, transport: r.transport, store: r.store, idleTimeoutMs: r.idleTimeoutMs });
    case 'openai-chat':
      return new ChatCompletionsProvider({
        baseUrl: r.baseUrl!,
        apiKey: r.apiKey ?? undefined,
        name,
        supportsPrediction: r.supportsPrediction,
        maxTokensField: r.maxTokensField,
        idleTimeoutMs: r.idleTimeoutMs,
        infillUrl: r.infillEndpoint,
        http: factories.chatHttp,
      });
    case 'embedded':
      return factories.embedded ? factories.embedded(r) : unconfigured(route);
  }
}

function unconfigured(route: Route): ModelProvider {
  return {
    kind: 'embedded',
    close: async () => undefined,
    async *stream() {
      throw new ProviderError('not_configured', `No model is available for the ${route} route: set OPENAI_API_KEY or OPENAI_BASE_URL, or install the embedded model.`);
    },
  };
}
