import { ProviderError, type ModelEvent, type ModelProvider, type ModelRequest, type PromptRequest } from '../../models/ModelProvider';

type Step = { kind: 'text'; text: string } | { kind: 'end' } | { kind: 'fail'; error: ProviderError };

/**
 * A provider the test drives step by step, for chat requests (`stream`) and raw FIM prompts
 * (`completePrompt`) alike. Core tests run on a fake clock with no sockets; the real wire
 * formats are covered by the provider contract suite on loopback servers.
 */
export class ScriptedProvider implements ModelProvider {
  readonly kind = 'scripted';
  readonly requests: ModelRequest[] = [];
  readonly prompts: PromptRequest[] = [];
  aborted = 0;
  private readonly steps: Step[] = [];
  private readonly waiters = new Set<() => void>();

  emit(text: string): void {
    this.push({ kind: 'text', text });
  }

  end(): void {
    this.push({ kind: 'end' });
  }

  fail(error: ProviderError): void {
    this.push({ kind: 'fail', error });
  }

  private push(step: Step): void {
    this.steps.push(step);
    for (const wake of [...this.waiters]) wake();
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    this.requests.push(request);
    return this.play(signal);
  }

  completePrompt(request: PromptRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    this.prompts.push(request);
    return this.play(signal);
  }

  /** Yields the scripted steps as they come; several streams may wait at once. */
  private async *play(signal: AbortSignal): AsyncGenerator<ModelEvent> {
    let wake = () => {};
    const onAbort = () => {
      this.aborted++;
      wake();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    let output = 0;
    try {
      for (;;) {
        if (signal.aborted) return;
        const step = this.steps.shift();
        if (!step) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            this.waiters.add(resolve);
          });
          this.waiters.delete(wake);
          continue;
        }
        if (step.kind === 'fail') throw step.error;
        if (step.kind === 'end') {
          yield { type: 'usage', inputTokens: 100, outputTokens: output, cachedInputTokens: 0 };
          yield { type: 'done', finishReason: 'stop' };
          return;
        }
        output++;
        yield { type: 'text', text: step.text };
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {}
}

/** Lets the provider's async iteration and the turn's loop run (not a sleep: no time passes). */
export async function drain(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export { ProviderError };
