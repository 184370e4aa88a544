/**
 * One way to fill the middle for each kind of model: a FIM template sent as a raw prompt
 * (`completePrompt`), the provider's native infill (llama-server `/infill`, the embedded model),
 * or a chat prompt for models without FIM tokens. `createInfiller` picks it from the route's
 * configuration, else from the provider and the model's name.
 */
import { ProviderError, type ModelEvent, type ModelProvider } from '../ports/ModelProvider';
import { ChatInfillFilter, chatInfillMessages } from './chatInfill';
import { fimTemplate, fimTemplateForModel, fimTemplateNames, type FimPrompt, type FimTemplateName } from './fimTemplates';

/** A FIM template by family, `infill` (the provider's native endpoint), or `chat` (no FIM tokens). */
export type FimMode = FimTemplateName | 'infill' | 'chat';

export const fimModes: readonly FimMode[] = [...fimTemplateNames, 'infill', 'chat'];

export interface InfillSettings {
  maxOutputTokens: number;
  /** Stop sequences besides the template's own (e.g. "\n" for a single line). */
  stop: string[];
  /** Keystrokes in one buffer share a thread: the embedded model reuses its KV cache. */
  threadId?: string;
}

export interface Infiller {
  readonly mode: FimMode;
  readonly model: string;
  /** Same events, abort and error contract as `ModelProvider.stream`. */
  infill(prompt: FimPrompt, settings: InfillSettings, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

/** The configured mode, else native infill for the embedded model, a template the model's name implies, or chat. */
export function resolveFimMode(provider: ModelProvider, model: string, configured?: FimMode): FimMode {
  if (configured) return configured;
  if (provider.kind === 'embedded' && provider.infill) return 'infill';
  const byName = fimTemplateForModel(model);
  if (byName && provider.completePrompt) return byName;
  return 'chat';
}

export function createInfiller(provider: ModelProvider, model: string, configured?: FimMode): Infiller {
  const mode = resolveFimMode(provider, model, configured);
  const temperature = 0;
  switch (mode) {
    case 'chat':
      return {
        mode,
        model,
        async *infill(prompt, settings, signal) {
          // No "\n" stop here: a chat model may open with a fence line that the filter drops.
          const filter = new ChatInfillFilter(prompt.prefix.slice(prompt.prefix.lastIndexOf('\n') + 1));
          const request = { model, messages: chatInfillMessages(prompt), maxOutputTokens: settings.maxOutputTokens, temperature };
          for await (const event of provider.stream(request, signal)) {
            if (event.type !== 'text') {
              if (event.type === 'done') {
                const rest = filter.finish();
                if (rest) yield { type: 'text', text: rest };
              }
              yield event;
              continue;
            }
            const text = filter.push(event.text);
            if (text) yield { type: 'text', text };
          }
        },
      };
    case 'infill':
      return {
        mode,
        model,
        infill(prompt, settings, signal) {
          if (!provider.infill) return unsupported(`The ${provider.kind} provider has no native fill-in-the-middle; set a FIM template for the complete route.`);
          // The embedded model's window is small and its KV cache is kept per thread: the
          // snippets would change at every keystroke and evict it, so it goes without them.
          const extra = provider.kind === 'embedded' ? undefined : prompt.snippets.map((s) => ({ filename: s.path, text: s.text }));
          return provider.infill(prompt.prefix, prompt.suffix, { model, maxOutputTokens: settings.maxOutputTokens, temperature, stop: settings.stop, threadId: settings.threadId, extra }, signal);
        },
      };
    default: {
      const template = fimTemplate(mode);
      return {
        mode,
        model,
        infill(prompt, settings, signal) {
          if (!provider.completePrompt) return unsupported(`The ${provider.kind} provider cannot send raw prompts, so the ${mode} FIM template cannot be used; point the complete route at an OpenAI-compatible server.`);
          const stop = [...template.stop, ...settings.stop];
          return provider.completePrompt({ model, prompt: template.render(prompt), maxOutputTokens: settings.maxOutputTokens, temperature, stop }, signal);
        },
      };
    }
  }
}

/** Fails on the first `next()`: a route configured with a strategy its provider lacks. */
async function* unsupported(message: string): AsyncGenerator<ModelEvent, void, undefined> {
  throw new ProviderError('not_configured', message);
}
