import { ProviderError, type ModelEvent, type ModelProvider, type ModelRequest } from '../ports/ModelProvider';

/** What happens at a pause in a model call: the test acts, then lets it go on (or not). */
export type Beat<Pause extends string = string> = ModelEvent | { pause: Pause } | ProviderError;

/**
 * Test support: a model that answers each call from the files as they are when it is called (it "reads"
 * them), so a later patch can rewrite what an earlier one, or a steered one, left.
 */
export class LiveModel<Pause extends string = string> implements ModelProvider {
  readonly kind = 'live-model';
  /** The label of the pause the current call waits at, if it does. */
  pausedFor: Pause | null = null;
  private wake: (() => void) | null = null;
  /** One per call, in order; called when the call starts. Past the end: "Done." */
  answers: Array<() => Array<Beat<Pause>>> = [];
  readonly requests: ModelRequest[] = [];

  release(): void {
    this.pausedFor = null;
    this.wake?.();
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    this.requests.push(structuredClone(request));
    const beats = this.answers.shift()?.() ?? [{ type: 'text', text: 'Done.' }];
    const self = this;
    return (async function* () {
      for (const beat of beats) {
        if (signal.aborted) return;
        if (beat instanceof ProviderError) throw beat;
        if ('pause' in beat) {
          self.pausedFor = beat.pause;
          await new Promise<void>((resolve) => {
            self.wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
          self.wake = null;
          self.pausedFor = null;
          if (signal.aborted) return;
          continue;
        }
        yield beat;
        await Promise.resolve();
      }
      yield { type: 'usage', inputTokens: 10, outputTokens: 10, cachedInputTokens: 0 };
      yield { type: 'done', finishReason: beats.some((b) => 'type' in b && b.type === 'tool-call') ? 'tool_calls' : 'stop' };
    })();
  }

  async close(): Promise<void> {}
}

