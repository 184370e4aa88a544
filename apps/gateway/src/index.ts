/**
 * The gateway's public face: what a host (main.ts, the e2e server, bench/) needs to compose a
 * gateway and serve it. Everything else under src/ is internal and may move without notice;
 * `test/testing.ts` (`@flint/gateway/testing`) holds the parts bench/ and tests measure alone.
 *
 * @example
 * const gateway = createGateway({}, { store: new SqliteStore(file), clock: systemClock, log });
 * const server = await startServer({ gateway, port: 0, host: '127.0.0.1', webRoot, allowedOrigins: null, publicUrl: null, log });
 */
import { noModels, type ModelRouter } from './core/agent/ModelRouter';
import type { Clock } from './core/ports/Clock';
import type { Random } from './core/ports/Random';
import type { ClusterBus } from './core/ports/ClusterBus';
import type { CompletionConfig } from './core/complete/CompletionService';
import { completionExtension } from './core/complete/completionExtension';
import { agentExtensions } from './core/agent/agentExtension';
import type { ExtensionFactory } from './core/Extension';
import { searchExtension } from './core/search/searchExtension';
import { Gateway } from './core/Gateway';
import type { GatewayConfig } from './core/GatewayConfig';
import type { Log } from './core/ports/Log';
import type { SharedLimits } from './core/limits/SharedLimits';
import type { Store } from './core/ports/Store';
import { systemRandom } from './transport/systemRandom';

/** What the gateway is given from outside: its adapters. Only a store and a clock are required. */
import type { TerminalHost } from './core/TerminalHost';

export interface GatewayPorts {
  store: Store;
  clock: Clock;
  /** Where ids and tokens come from; `systemRandom` by default. */
  random?: Random;
  log?: Log;
  /** Which model serves each route; none: the agent and autocomplete say they are not configured. */
  models?: ModelRouter;
  /** The other gateways of a cluster (decision 0024); alone by default. */
  bus?: ClusterBus;
  /** Where prompt rates and token budgets are counted (`RedisLimits` in a cluster); in memory by default. */
  limits?: SharedLimits;
  /** Shared terminals and the agent's commands (`TerminalService`, decision 0033); off by default. */
  terminals?: TerminalHost;
}

/** The gateway's settings: any of `defaultConfig`'s, and autocomplete's limits. */
export interface GatewaySettings extends Partial<GatewayConfig> {
  completion?: Partial<CompletionConfig>;
}

/**
 * The features a gateway offers, each an extension of the kernel in its own folder. Adding a
 * feature is adding its folder and one entry here.
 */
export function standardExtensions(config: GatewaySettings, ports: GatewayPorts): ExtensionFactory[] {
  const models = ports.models ?? noModels;
  return [searchExtension(), completionExtension(models, config.completion), ...agentExtensions(models, ports.limits, ports.terminals)];
}

/** A gateway with `config` over the defaults, wired to `ports`, offering `extensions`. Serve it with `startServer`. */
export function createGateway(config: GatewaySettings, ports: GatewayPorts, extensions = standardExtensions(config, ports)): Gateway {
  const { completion: _completion, ...gatewayConfig } = config;
  const { models: _models, limits: _limits, ...kernelPorts } = ports;
  return new Gateway({ ...kernelPorts, random: ports.random ?? systemRandom, config: gatewayConfig, extensions });
}

export type { Gateway, CreatedWorkspace } from './core/Gateway';
export type { Extension, ExtensionFactory, ExtensionHost, ExtensionSession, MessageNamespace, MessageOf } from './core/Extension';
export { defaultConfig, type AgentConfig, type GatewayConfig } from './core/GatewayConfig';
export type { Clock } from './core/ports/Clock';
export type { Log, LogLevel } from './core/ports/Log';
export type { ClusterBus } from './core/ports/ClusterBus';
export type { SharedLimits } from './core/limits/SharedLimits';
export { defaultCompletionConfig, type CompletionConfig } from './core/complete/CompletionService';
export { readiness, type ModelRouter, type Readiness, type RoutedModel } from './core/agent/ModelRouter';
// Adapters a host picks from.
export type { Store } from './core/ports/Store';
export { SqliteStore } from './storage/SqliteStore';
export { PostgresStore } from './storage/PostgresStore';
export { RedisBus } from './cluster/RedisBus';
export { RedisLimits } from './cluster/RedisLimits';
export { clusterReadiness } from './cluster/clusterReadiness';
export type { ModelEvent, ModelMessage, ModelProvider } from './core/ports/ModelProvider';
export { createProviders, describeProviderConfig, loadProviderConfig, ProviderConfigError, type RouteConfig } from './models/providerConfig';
export { ResponsesProvider } from './models/ResponsesProvider';
export { EmbeddedProvider } from './models/embedded/EmbeddedProvider';
export { editByInfill } from './models/embedded/editByInfill';
export type { FimMode } from './core/complete/Infiller';
export { NodeDisk } from './project/NodeDisk';
export { FolderSync } from './project/FolderSync';
export { demoWorkspaceFiles } from './seed/demoWorkspace';
// Serving it.
export { startServer, type RunningServer, type ServerOptions } from './transport/httpServer';
export { linkUrl } from './transport/restApi';
export { systemClock } from './transport/systemClock';
export { systemRandom } from './transport/systemRandom';
// Shared terminals in their sandbox (issue 35).
export type { TerminalHost } from './core/TerminalHost';
export { defaultSandboxLimits, probeSandbox, sandboxCommand } from './terminal/Sandbox';
export { TerminalService } from './terminal/TerminalService';
export { workspaceFolders } from './terminal/workspaceFolders';
export type { Random } from './core/ports/Random';
// Recording and replay (issue 37).
export { parseRecording, writeRecording, RECORDING_FORMAT, RECORDING_VERSION, RecordingError, type Recording, type RecordedFrame } from './recording/Recording';
export { Replayer } from './recording/replayDocs';
export { ReplayProvider } from './recording/ReplayProvider';
export { SessionRecorder } from './recording/SessionRecorder';
