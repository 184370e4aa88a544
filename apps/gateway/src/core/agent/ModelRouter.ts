import type { GaugeReading } from '../Metrics';
import type { FimMode } from '../complete/Infiller';
import type { CircuitState, ModelProvider, Route } from '../ports/ModelProvider';

/** Where a route's requests go, and whether the route's circuit breaker lets them through. */
export interface RouteEndpoint {
  /** "api.cerebras.ai", "127.0.0.1:8080", or "embedded". */
  readonly host: string;
  /**
   * The route's breaker (per endpoint and model: another model on the same host keeps its own).
   * `retryInMs`: while open, how long until a trial request is let through; else 0.
   */
  snapshot(): { state: CircuitState; retryInMs: number };
}

export interface RoutedModel {
  provider: ModelProvider;
  model: string;
  /** The model's window in tokens (Spark-class: 128k). */
  contextTokens: number;
  /** Whether to send the original as a predicted output. */
  supportsPrediction: boolean;
  /**
   * Whether the endpoint takes `tools` and streams tool calls (Responses and Chat Completions
   * endpoints do; the embedded model does not: the agent thread asks it for patches in plain text).
   */
  supportsTools?: boolean;
  /** Complete route: how to fill the middle; unset, it follows from the provider and model name. */
  fimTemplate?: FimMode;
  /** Unset: the provider is not behind a breaker (tests, scripted providers), always usable. */
  endpoint?: RouteEndpoint;
}

/**
 * Which model serves a route in this deployment; null when none is configured. `workspaceId`:
 * the workspace asking, whose owner may have connected a model of its own (WorkspaceModels);
 * absent for gateway-wide questions (readiness, metrics).
 */
export type ModelRouter = (route: Route, workspaceId?: string) => RoutedModel | null;

export const noModels: ModelRouter = () => null;

export interface RouteReadiness {
  /** Null: no model is configured for the route. */
  model: string | null;
  host: string | null;
  breaker: CircuitState | null;
  retryInMs: number;
  /** Configured, and its breaker is not open (half-open lets the next request through). */
  usable: boolean;
}

export interface Readiness {
  /** The fast route is usable: it is what a prompt uses unless the person picks another. */
  ready: boolean;
  routes: Record<Route, RouteReadiness>;
}

const routes: Route[] = ['fast', 'deep', 'complete'];

/** Each route's model, endpoint and breaker now: the gateway's readiness to serve prompts. */
export function readiness(router: ModelRouter): Readiness {
  const view = {} as Record<Route, RouteReadiness>;
  for (const route of routes) {
    const routed = router(route);
    const breaker = routed?.endpoint?.snapshot() ?? null;
    view[route] = {
      model: routed?.model ?? null,
      host: routed?.endpoint?.host ?? null,
      breaker: breaker?.state ?? null,
      retryInMs: breaker?.retryInMs ?? 0,
      usable: routed !== null && breaker?.state !== 'open',
    };
  }
  return { ready: view.fast.usable, routes: view };
}

const circuitStates: CircuitState[] = ['closed', 'half-open', 'open'];

/** `flint_route_breaker_state`: for each route behind a breaker, 1 for its state now and 0 for the others. */
export function routeBreakerStates(router: ModelRouter): GaugeReading {
  const reading: Exclude<GaugeReading, number> = [];
  for (const [route, view] of Object.entries(readiness(router).routes)) {
    if (view.breaker === null) continue;
    for (const state of circuitStates) reading.push({ labels: { route, state }, value: view.breaker === state ? 1 : 0 });
  }
  return reading;
}
