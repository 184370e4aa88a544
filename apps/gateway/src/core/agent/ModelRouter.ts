import type { FimMode } from '../../models/fim/Infiller';
import type { ModelProvider, Route } from '../../models/ModelProvider';

export interface RoutedModel {
  provider: ModelProvider;
  model: string;
  /** The model's window in tokens (Spark-class: 128k). */
  contextTokens: number;
  /** Whether to send the original as a predicted output. */
  supportsPrediction: boolean;
  /** Complete route: how to fill the middle; unset, it follows from the provider and model name. */
  fimTemplate?: FimMode;
}

/** Which model serves a route in this deployment; null when none is configured. */
export type ModelRouter = (route: Route) => RoutedModel | null;

export const noModels: ModelRouter = () => null;
