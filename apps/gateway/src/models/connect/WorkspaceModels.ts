import type { Role } from '@flint/protocol';
import type { ModelRouter, RoutedModel } from '../../core/agent/ModelRouter';
import type { Log } from '../../core/ports/Log';
import { ChatCompletionsProvider } from '../ChatCompletionsProvider';
import type { GuardedProvider } from '../CircuitBreaker';
import { ProviderError, type Route } from '../../core/ports/ModelProvider';
import { createProviders, type ProviderConfig, type RouteConfig } from '../providerConfig';
import type { SecretBox } from './secretBox';
import { ModelAddressPolicy, refusalSentence, type AddressRefusal } from './modelAddressPolicy';

/**
 * Models a workspace's owner connects from the agent panel (issue 37): an OpenAI-compatible
 * endpoint, Ollama or a llama.cpp server, for the workspace's agent routes (fast and deep;
 * autocomplete stays the gateway's). Kept in the store's metadata with the key sealed
 * (decision 0031); the key never leaves the gateway again — the owner sees it masked,
 * collaborators only the model's name.
 */
export type ConnectionKind = 'openai' | 'ollama' | 'llamacpp';
export const connectionKinds: ConnectionKind[] = ['openai', 'ollama', 'llamacpp'];

/** Where each kind listens when the owner gives no URL. */
export const defaultBaseUrls: Record<ConnectionKind, string> = {
  openai: 'https://api.openai.com/v1',
  ollama: 'http://127.0.0.1:11434',
  llamacpp: 'http://127.0.0.1:8080',
};

export interface ConnectionRequest {
  kind: ConnectionKind;
  baseUrl?: string;
  apiKey?: string;
  model: string;
}

interface StoredConnection {
  kind: ConnectionKind;
  baseUrl: string;
  model: string;
  sealedKey: string | null;
  connectedAt: number;
}

/** What a client is told: the owner gets the key masked; anyone else, no key at all. */
export interface ConnectionView {
  kind: ConnectionKind;
  model: string;
  connectedAt: number;
  baseUrl?: string;
  maskedKey?: string | null;
}

export type ConnectResult = { ok: true; view: ConnectionView } | { ok: false; status: 400 | 502; message: string };

/**
 * What the owner is told when the check fails: one fixed sentence per class, naming only the
 * host they typed — never the remote's status or body text (decision 0031, "Addresses"), so the
 * check cannot be used to read what an address answers.
 */
export const checkFailureSentences = {
  unreachable: (host: string) => `${host} could not be reached: check the address and that the model server is running.`,
  key: (host: string) => `${host} refused the key: check the API key.`,
  limited: (host: string) => `${host} answered that the key is rate-limited or out of quota.`,
  notCompatible: (host: string) => `${host} did not answer as an OpenAI-compatible endpoint: check the URL (it usually ends in /v1) and the model name.`,
  timeout: (host: string, ms: number) => `${host} did not answer within ${ms >= 1000 ? Math.round(ms / 1000) : ms / 1000} s.`,
};

export interface WorkspaceModelsOptions {
  meta: { get(key: string): string | null; set(key: string, value: string): void };
  secrets: SecretBox;
  clock: { now(): number };
  log?: Log;
  contextTokens?: number;
  /** How long the check request may take before the connection is refused. */
  checkTimeoutMs?: number;
  /** Which addresses a connection may reach; default: no loopback or private ranges (modelAddressPolicy). */
  addresses?: ModelAddressPolicy;
}

const metaKey = (workspaceId: string) => `model-connection:${workspaceId}`;

export function maskKey(key: string): string {
  return key.length >= 12 ? `${key.slice(0, 3)}…${key.slice(-4)}` : '••••';
}

/** Ollama and llama-server speak the OpenAI wire under /v1; a URL given without it gets it. */
function chatBaseUrl(kind: ConnectionKind, given: string | undefined): string | { error: string } {
  const raw = (given?.trim() || defaultBaseUrls[kind]).replace(/\/+$/, '');
  if (!URL.canParse(raw)) return { error: `"${raw}" is not a URL: write it like ${defaultBaseUrls[kind]}.` };
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: `The URL must start with http:// or https://, not ${url.protocol}//.` };
  if (url.username || url.password) return { error: 'Put the key in the key field, not in the URL.' };
  return kind !== 'openai' && !/\/v1$/.test(url.pathname) ? `${raw}/v1` : raw;
}

export class WorkspaceModels {
  private readonly live = new Map<string, { stored: string; providers: Record<Route, GuardedProvider> }>();

  private readonly addresses: ModelAddressPolicy;

  constructor(private readonly options: WorkspaceModelsOptions) {
    this.addresses = options.addresses ?? new ModelAddressPolicy({ allowPrivate: false, gatewayPort: () => null });
  }

  private stored(workspaceId: string): StoredConnection | null {
    const text = this.options.meta.get(metaKey(workspaceId));
    if (!text) return null;
    try {
      return JSON.parse(text) as StoredConnection;
    } catch (error) {
      this.options.log?.('warn', 'unreadable model connection', { workspaceId, error: String(error) });
      return null;
    }
  }

  view(workspaceId: string, role: Role): ConnectionView | null {
    const stored = this.stored(workspaceId);
    if (!stored) return null;
    const view: ConnectionView = { kind: stored.kind, model: stored.model, connectedAt: stored.connectedAt };
    if (role !== 'owner') return view;
    const key = stored.sealedKey === null ? null : this.options.secrets.open(stored.sealedKey);
    return { ...view, baseUrl: stored.baseUrl, maskedKey: key === null ? null : maskKey(key) };
  }

  /**
   * Checks the endpoint with a real one-token request, then keeps it for the workspace. A
   * refusal is a sentence saying what the provider answered; nothing is stored then.
   */
  async connect(workspaceId: string, request: ConnectionRequest): Promise<ConnectResult> {
    const baseUrl = chatBaseUrl(request.kind, request.baseUrl);
    if (typeof baseUrl !== 'string') return { ok: false, status: 400, message: baseUrl.error };
    const model = request.model.trim();
    if (!model) return { ok: false, status: 400, message: 'Name the model to use (for Ollama, as `ollama list` shows it).' };
    const apiKey = request.apiKey?.trim() || undefined;
    if (request.kind === 'openai' && !apiKey && new URL(baseUrl).host === 'api.openai.com') return { ok: false, status: 400, message: 'OpenAI needs an API key.' };
    const host = new URL(baseUrl).host;
    const screened = await this.addresses.screen(new URL(baseUrl));
    if (screened === 'unresolved') return { ok: false, status: 502, message: checkFailureSentences.unreachable(host) };
    if (screened) return { ok: false, status: 400, message: refusalSentence(host, screened) };
    const failure = await this.check(baseUrl, apiKey, model);
    if (failure) return failure;
    const stored: StoredConnection = { kind: request.kind, baseUrl, model, sealedKey: apiKey ? this.options.secrets.seal(apiKey) : null, connectedAt: this.options.clock.now() };
    this.options.meta.set(metaKey(workspaceId), JSON.stringify(stored));
    this.drop(workspaceId);
    return { ok: true, view: this.view(workspaceId, 'owner')! };
  }

  disconnect(workspaceId: string): void {
    this.options.meta.set(metaKey(workspaceId), '');
    this.drop(workspaceId);
  }

  /** The gateway's router, with each workspace's connected model in front for the agent routes. */
  router(base: ModelRouter): ModelRouter {
    return (route, workspaceId) => (workspaceId !== undefined && route !== 'complete' ? this.routed(workspaceId, route) : null) ?? base(route, workspaceId);
  }

  async close(): Promise<void> {
    const providers = [...this.live.values()];
    this.live.clear();
    await Promise.all(providers.map((p) => p.providers.fast.close()));
  }

  private routed(workspaceId: string, route: Route): RoutedModel | null {
    const text = this.options.meta.get(metaKey(workspaceId));
    if (!text) return null;
    let live = this.live.get(workspaceId);
    if (!live || live.stored !== text) {
      const stored = this.stored(workspaceId);
      if (!stored) return null;
      const apiKey = stored.sealedKey === null ? null : this.options.secrets.open(stored.sealedKey);
      if (stored.sealedKey !== null && apiKey === null) {
        this.options.log?.('warn', 'model connection key unreadable (another secret key?); the workspace uses the gateway models', { workspaceId });
        return null;
      }
      this.drop(workspaceId);
      const routeConfig: RouteConfig = { kind: 'openai-chat', baseUrl: stored.baseUrl, apiKey, model: stored.model, supportsPrediction: false, supportsTools: true };
      const config: ProviderConfig = { routes: { fast: routeConfig, deep: routeConfig, complete: routeConfig }, breaker: { failureThreshold: 5, cooldownMs: 30_000 } };
      const chatHttp = { lookup: this.addresses.lookupFor(new URL(stored.baseUrl)), followRedirects: false };
      live = { stored: text, providers: createProviders(config, { clock: this.options.clock, log: this.options.log, chatHttp }) };
      this.live.set(workspaceId, live);
    }
    const provider = live.providers[route];
    const stored = this.stored(workspaceId)!;
    return { provider, model: stored.model, contextTokens: this.options.contextTokens ?? 32_000, supportsPrediction: false, supportsTools: true, endpoint: provider.breaker };
  }

  private drop(workspaceId: string): void {
    const live = this.live.get(workspaceId);
    this.live.delete(workspaceId);
    // Every route shares one adapter (createProviders): closing one closes it.
    if (live) void live.providers.fast.close().catch((error: unknown) => this.options.log?.('warn', 'closing a model connection failed', { workspaceId, error: String(error) }));
  }

  /**
   * Null when the endpoint answered a one-token chat request; else the refusal, as a fixed
   * sentence per class (the remote's own words go to the operator's log only).
   */
  private async check(baseUrl: string, apiKey: string | undefined, model: string): Promise<Extract<ConnectResult, { ok: false }> | null> {
    const url = new URL(baseUrl);
    let refused: AddressRefusal | null = null;
    const http = { lookup: this.addresses.lookupFor(url, (refusal) => (refused = refusal)), followRedirects: false };
    const provider = new ChatCompletionsProvider({ baseUrl, apiKey, maxTokensField: 'max_tokens', http });
    const timeoutMs = this.options.checkTimeoutMs ?? 20_000;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      let answered = false;
      for await (const event of provider.stream({ model, messages: [{ role: 'user', content: 'Reply with OK.' }], maxOutputTokens: 1 }, signal)) {
        if (event.type === 'done' || event.type === 'text') {
          answered = true;
          break;
        }
      }
      // The stream ends quietly when the signal aborts: a timeout is not an answer.
      if (answered) return null;
      if (signal.aborted) return { ok: false, status: 502, message: checkFailureSentences.timeout(url.host, timeoutMs) };
      return { ok: false, status: 502, message: checkFailureSentences.notCompatible(url.host) };
    } catch (error) {
      this.options.log?.('info', 'a model connection check failed', { host: url.host, error: error instanceof Error ? error.message : String(error) });
      const refusal = refused as AddressRefusal | null;
      if (refusal) return { ok: false, status: 400, message: refusalSentence(url.host, refusal) };
      if (signal.aborted) return { ok: false, status: 502, message: checkFailureSentences.timeout(url.host, timeoutMs) };
      const code = error instanceof ProviderError ? error.code : 'network';
      const sentence =
        code === 'auth' ? checkFailureSentences.key : code === 'rate_limited' || code === 'quota' ? checkFailureSentences.limited : code === 'network' ? checkFailureSentences.unreachable : checkFailureSentences.notCompatible;
      return { ok: false, status: 502, message: sentence(url.host) };
    } finally {
      await provider.close();
    }
  }
}
