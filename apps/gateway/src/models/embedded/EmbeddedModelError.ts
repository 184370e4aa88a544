import { ProviderError, type ProviderErrorCode } from '../../core/ports/ModelProvider';

export type EmbeddedModelErrorCode =
  // The model file: found before anything is loaded (ggufMetadata.ts).
  | 'not_found'
  | 'unreadable'
  | 'not_gguf'
  | 'unsupported_version'
  | 'truncated'
  | 'corrupt'
  | 'missing_metadata'
  | 'invalid_metadata'
  // The model host process (modelHost.ts).
  /** llama.cpp refused the file (an error, not a crash). */
  | 'load_failed'
  /** The host died: llama.cpp aborted, a signal, out of memory. Carries the exit and the last log line. */
  | 'host_crashed'
  /** Infill asked of a model without FIM tokens. */
  | 'infill_unsupported'
  | 'context_length'
  /** llama.cpp threw during a generation. */
  | 'generation_failed';

/**
 * A failure of the embedded model as a value with a code. It never leaves the embedded adapter:
 * `toProviderError` turns it into the `ProviderError` every caller of a `ModelProvider` handles,
 * keeping this error as `cause` for logs and tests.
 */
export class EmbeddedModelError extends Error {
  constructor(
    readonly code: EmbeddedModelErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EmbeddedModelError';
  }
}

/**
 * The provider boundary. A file that cannot be served is `not_configured`: retrying cannot help,
 * the user has to point Flint at another model. A host that died mid-generation is `network`: like
 * a reset connection, the next request starts a fresh host and usually succeeds (a model that
 * crashes every time trips the circuit breaker instead of looping).
 */
const providerCodes: Record<EmbeddedModelErrorCode, ProviderErrorCode> = {
  not_found: 'not_configured',
  unreadable: 'not_configured',
  not_gguf: 'not_configured',
  unsupported_version: 'not_configured',
  truncated: 'not_configured',
  corrupt: 'not_configured',
  missing_metadata: 'not_configured',
  invalid_metadata: 'not_configured',
  load_failed: 'not_configured',
  infill_unsupported: 'not_configured',
  host_crashed: 'network',
  context_length: 'context_length',
  generation_failed: 'bad_response',
};

export function toProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  if (!(error instanceof EmbeddedModelError)) {
    // A bug in the adapter, not a model outcome: keep it visible.
    throw error;
  }
  const converted = new ProviderError(providerCodes[error.code], error.message, null, 'embedded');
  converted.cause = error;
  return converted;
}
