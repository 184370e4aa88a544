import type { AgentRoute } from '@flint/protocol';
import type { ModelProvider } from '../../models/ModelProvider';

export interface RoutedModel {
  provider: ModelProvider;
  model: string;
  /** The model's window in tokens (Spark-class: 128k). */
  contextTokens: number;
  /** Whether to send the original as a predicted output. */
  supportsPrediction: boolean;
}

/** Which model serves a route in this deployment; null when none is configured. */
export type ModelRouter = (route: AgentRoute) => RoutedModel | null;

export const noModels: ModelRouter = () => null;
