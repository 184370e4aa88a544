import type { ModelProvider } from '../../core/ports/ModelProvider';
import type { EmbeddedProvider } from './EmbeddedProvider';

/**
 * The bundled demo model completes code; it cannot follow an instruction. For it, an inline
 * edit is fill-in-the-middle: the text before and after the region in, a new region out (the
 * format it was trained on, models/MODEL_CARD.md). The instruction is ignored, and the model
 * card says so. Any other GGUF keeps the chat path.
 */
export function editByInfill(provider: EmbeddedProvider): ModelProvider {
  return {
    kind: provider.kind,
    close: () => provider.close(),
    stream: (request, signal) =>
      request.infill
        ? provider.infill(request.infill.prefix, request.infill.suffix, { maxOutputTokens: request.maxOutputTokens, threadId: request.threadId }, signal)
        : provider.stream(request, signal),
    infill: (prefix, suffix, request, signal) => provider.infill(prefix, suffix, request, signal),
  };
}
