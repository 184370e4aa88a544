import { ProviderError, type ModelEvent, type ModelProvider, type ModelRequest } from '../../models/ModelProvider';

type Step = { kind: 'text'; text: string } | { kind: 'end' } | { kind: 'fail'; error: ProviderError };

/**
 * A provider the test drives step by step (core tests run on a fake clock, with no sockets;
 * the real wire formats are covered by the provider contract suite on loopback servers).
 */
export class ScriptedProvider implements ModelProvider {
  readonly kind = 'scripted';
  readonly requests: ModelRequest[] = [];
  aborted = 0;
  private steps: Step[] = [];
  private wake: (() => void) | null = null;

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
    this.wake?.();
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    this.requests.push(request);
    const onAbort = () => {
      this.aborted++;
      this.wake?.();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    let output = 0;
    try {
      for (;;) {
        if (signal.aborted) return;
        const step = this.steps.shift();
        if (!step) {
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = null;
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
