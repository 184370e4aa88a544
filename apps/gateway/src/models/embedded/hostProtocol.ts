/**
 * Messages between the gateway and its model host process (Node IPC, JSON serialisation).
 * Each side decodes what it receives at the edge: a malformed message is a bug to report, never
 * something to guess at.
 */
import type { EmbeddedModelErrorCode } from './EmbeddedModelError';

export interface HostConfig {
  modelPath: string;
  /** Tokens per warm thread (context sequence). */
  contextSize: number;
  /** How many threads keep their KV cache at once (llama.cpp context sequences). */
  warmThreads: number;
  /** CPU threads llama.cpp computes with. */
  cpuThreads: number;
}

/** One generation. `complete` continues `prompt`; `infill` fills between `prefix` and `suffix`. */
export type GenerationJob =
  | { kind: 'complete'; prompt: string }
  | { kind: 'infill'; prefix: string; suffix: string };

export interface GenerationSettings {
  maxTokens: number;
  temperature: number;
  stop: string[];
  /** Requests with the same thread reuse its KV cache; none means any idle sequence. */
  threadId: string | null;
}

export type GatewayToHost =
  | { type: 'load'; config: HostConfig }
  | { type: 'generate'; id: number; job: GenerationJob; settings: GenerationSettings }
  | { type: 'cancel'; id: number };

export interface HostModelInfo {
  contextSize: number;
  canInfill: boolean;
}

/** Every `generate` gets exactly one `end` or `error`, also after a `cancel`. */
export type HostToGateway =
  | { type: 'ready'; info: HostModelInfo }
  | { type: 'load_failed'; message: string }
  | { type: 'text'; id: number; text: string }
  | {
      type: 'end';
      id: number;
      finishReason: 'stop' | 'length' | 'cancelled';
      inputTokens: number;
      cachedInputTokens: number;
      outputTokens: number;
    }
  | { type: 'error'; id: number; code: EmbeddedModelErrorCode; message: string };

type Shape = Record<string, 'string' | 'number' | 'boolean' | 'object' | 'string|null' | 'string[]'>;

function matches(value: unknown, shape: Shape): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return Object.entries(shape).every(([key, kind]) => {
    const field = record[key];
    if (kind === 'string|null') return field === null || typeof field === 'string';
    if (kind === 'string[]') return Array.isArray(field) && field.every((s) => typeof s === 'string');
    if (kind === 'object') return typeof field === 'object' && field !== null;
    return typeof field === kind;
  });
}

const hostShapes: Record<HostToGateway['type'], Shape> = {
  ready: { info: 'object' },
  load_failed: { message: 'string' },
  text: { id: 'number', text: 'string' },
  end: { id: 'number', finishReason: 'string', inputTokens: 'number', cachedInputTokens: 'number', outputTokens: 'number' },
  error: { id: 'number', code: 'string', message: 'string' },
};

export function decodeHostMessage(value: unknown): HostToGateway | null {
  if (!matches(value, { type: 'string' })) return null;
  const shape = hostShapes[(value as { type: string }).type as HostToGateway['type']];
  if (!shape || !matches(value, shape)) return null;
  const message = value as HostToGateway;
  if (message.type === 'ready' && !matches(message.info, { contextSize: 'number', canInfill: 'boolean' })) return null;
  return message;
}

export function decodeGatewayMessage(value: unknown): GatewayToHost | null {
  if (!matches(value, { type: 'string' })) return null;
  const message = value as GatewayToHost;
  switch (message.type) {
    case 'load':
      return matches(message.config, { modelPath: 'string', contextSize: 'number', warmThreads: 'number', cpuThreads: 'number' }) ? message : null;
    case 'cancel':
      return matches(message, { id: 'number' }) ? message : null;
    case 'generate': {
      const { job, settings } = message;
      const jobOk =
        matches(job, { kind: 'string' }) &&
        (job.kind === 'complete' ? matches(job, { prompt: 'string' }) : job.kind === 'infill' && matches(job, { prefix: 'string', suffix: 'string' }));
      const settingsOk = matches(settings, { maxTokens: 'number', temperature: 'number', stop: 'string[]', threadId: 'string|null' });
      return matches(message, { id: 'number' }) && jobOk && settingsOk ? message : null;
    }
    default:
      return null;
  }
}
