import { ProviderError, type FinishReason, type ModelEvent, type ModelProvider, type ModelRequest, type PromptRequest } from '../src/core/ports/ModelProvider';

type Step =
  | { kind: 'text'; text: string }
  | { kind: 'tool-call'; index: number; id: string; name: string }
  | { kind: 'tool-args'; index: number; text: string }
  | { kind: 'end'; finishReason: FinishReason }
  | { kind: 'fail'; error: ProviderError };

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
  /** Calls scripted in the answer being scripted now (since the last `end` or `fail`). */
  private callsInAnswer = 0;
  private callIds = 0;

  emit(text: string): void {
    this.push({ kind: 'text', text });
  }

  /** The answer begins a tool call, numbered after the answer's earlier ones; `id` defaults to a fresh `call_<n>`. */
  callTool(name: string, id = `call_${++this.callIds}`): void {
    this.push({ kind: 'tool-call', index: this.callsInAnswer++, id, name });
  }

  /** A piece of the arguments of the call begun last. */
  toolArgs(text: string): void {
    if (this.callsInAnswer === 0) throw new Error('ScriptedProvider.toolArgs: the answer has no call yet; script callTool first.');
    this.push({ kind: 'tool-args', index: this.callsInAnswer - 1, text });
  }

  /** Ends the answer: by default with tool_calls when it called a tool, as providers do, else stop. */
  end(finishReason: FinishReason = this.callsInAnswer > 0 ? 'tool_calls' : 'stop'): void {
    this.callsInAnswer = 0;
    this.push({ kind: 'end', finishReason });
  }

  fail(error: ProviderError): void {
    this.callsInAnswer = 0;
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
          yield { type: 'done', finishReason: step.finishReason };
          return;
        }
        if (step.kind === 'tool-call') {
          yield { type: 'tool-call', index: step.index, id: step.id, name: step.name };
          continue;
        }
        output++;
        yield step.kind === 'text' ? { type: 'text', text: step.text } : { type: 'tool-call-delta', index: step.index, arguments: step.text };
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
