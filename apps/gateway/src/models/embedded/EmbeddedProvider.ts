/**
 * The embedded llama.cpp provider (DESIGN §6): any GGUF file, run by node-llama-cpp in a child
 * process (modelHost.ts) so that llama.cpp aborting on a bad file or running out of memory costs
 * a ProviderError, not the gateway. The host starts on the first request, after the file passed
 * validation, and again on the request after it died.
 */
import { stat } from 'node:fs/promises';
import { ProviderError, type ModelEvent, type ModelMessage, type ModelProvider, type ModelRequest } from '../../core/ports/ModelProvider';
import { EmbeddedModelError, toProviderError } from './EmbeddedModelError';
import { inspectModelFile } from './ggufMetadata';
import type { GenerationJob, GenerationSettings } from './hostProtocol';
import { ModelHostProcess } from './ModelHostProcess';

/** Renders a conversation as the text the model continues. Replaceable: each model has its format. */
export type PromptTemplate = (messages: readonly ModelMessage[]) => string;

/**
 * A neutral template until the embedded model defines its own: one block per message, then the
 * assistant's header. Each prompt extends the previous turn's, so a thread's KV cache is reused.
 */
export const plainPromptTemplate: PromptTemplate = (messages) =>
  messages.map((m) => `### ${m.role}\n${m.content}\n\n`).join('') + '### assistant\n';

export interface EmbeddedProviderOptions {
  /** The GGUF file to serve. */
  modelPath: string;
  /** Tokens per thread; capped at the model's trained context. Default 2048. */
  contextSize?: number;
  /** Threads whose KV cache stays warm at once (llama.cpp context sequences). Default 4. */
  warmThreads?: number;
  /** CPU threads for llama.cpp. Default 1: on small machines a second one fights Node's own thread. */
  cpuThreads?: number;
  promptTemplate?: PromptTemplate;
}

export interface InfillOptions {
  maxOutputTokens: number;
  temperature?: number;
  stop?: string[];
  /** Requests in one thread (e.g. one editor buffer) reuse the KV cache of the text before the cursor. */
  threadId?: string;
}

/** The file as last checked: a failure is remembered until the file changes, so a bad model fails fast. */
interface FileVerdict {
  fingerprint: string;
  failure: EmbeddedModelError | null;
}

export class EmbeddedProvider implements ModelProvider {
  readonly kind = 'embedded';
  private host: ModelHostProcess | null = null;
  private starting: Promise<ModelHostProcess> | null = null;
  private verdict: FileVerdict | null = null;
  private closed = false;
  private readonly promptTemplate: PromptTemplate;

  constructor(private readonly options: EmbeddedProviderOptions) {
    this.promptTemplate = options.promptTemplate ?? plainPromptTemplate;
  }

  /** The model host's process id while one runs: for supervision, and for tests that kill it. */
  get hostPid(): number | null {
    return this.host?.alive ? this.host.pid : null;
  }

  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const job: GenerationJob = { kind: 'complete', prompt: this.promptTemplate(request.messages) };
    return this.run(job, settingsOf(request), signal);
  }

  /**
   * Fill-in-the-middle: generates the text between `prefix` and `suffix` with the model's FIM
   * tokens, for autocomplete. Same events, abort and error contract as `stream`; a model without
   * FIM tokens fails with `not_configured`.
   */
  infill(prefix: string, suffix: string, options: InfillOptions, signal: AbortSignal): AsyncIterable<ModelEvent> {
    return this.run({ kind: 'infill', prefix, suffix }, settingsOf(options), signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    const host = this.host ?? (await this.starting?.catch(() => null)) ?? null; // a failed start left nothing to close
    this.host = null;
    await host?.kill();
  }

  private async *run(job: GenerationJob, settings: GenerationSettings, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    if (signal.aborted) return;
    try {
      // On abort the host keeps starting: the next request needs it anyway.
      const host = await untilAborted(this.ensureHost(), signal);
      if (host === null) return;
      if (job.kind === 'infill' && !host.info.canInfill) {
        throw new EmbeddedModelError('infill_unsupported', 'The embedded model has no fill-in-the-middle tokens, so it cannot complete code at the cursor. Use a FIM-capable model for autocomplete.');
      }
      for await (const event of host.generate(job, settings, signal)) {
        if (event.type === 'text') {
          yield { type: 'text', text: event.text };
          continue;
        }
        yield { type: 'usage', inputTokens: event.inputTokens, outputTokens: event.outputTokens, cachedInputTokens: event.cachedInputTokens };
        yield { type: 'done', finishReason: event.finishReason };
      }
    } catch (error) {
      throw toProviderError(error);
    }
  }

  private async ensureHost(): Promise<ModelHostProcess> {
    if (this.closed) throw new ProviderError('not_configured', 'The embedded model provider is closed.', null, 'embedded');
    if (this.host?.alive) return this.host;
    this.host = null;
    this.starting ??= this.startHost().finally(() => (this.starting = null));
    return this.starting;
  }

  private async startHost(): Promise<ModelHostProcess> {
    const { modelPath } = this.options;
    const fingerprint = await fileFingerprint(modelPath);
    if (this.verdict?.fingerprint !== fingerprint) {
      this.verdict = { fingerprint, failure: null };
      try {
        await inspectModelFile(modelPath);
      } catch (error) {
        if (error instanceof EmbeddedModelError) this.verdict.failure = error;
        throw error;
      }
    }
    if (this.verdict.failure) throw this.verdict.failure;
    try {
      const host = await ModelHostProcess.start({
        modelPath,
        contextSize: this.options.contextSize ?? 2048,
        warmThreads: this.options.warmThreads ?? 4,
        cpuThreads: this.options.cpuThreads ?? 1,
      });
      if (this.closed) {
        await host.kill();
        throw new ProviderError('not_configured', 'The embedded model provider is closed.', null, 'embedded');
      }
      this.host = host;
      return host;
    } catch (error) {
      // A file llama.cpp cannot load stays unloadable: say so at once instead of crashing a host per request.
      if (error instanceof EmbeddedModelError) this.verdict.failure = error;
      throw error;
    }
  }
}

/** Settles with `promise`, or with null as soon as `signal` aborts (the promise's failure is then dropped). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function settingsOf(request: { maxOutputTokens: number; temperature?: number; stop?: string[]; threadId?: string }): GenerationSettings {
  return {
    maxTokens: request.maxOutputTokens,
    // Greedy unless asked: reproducible, and what a code model wants for edits.
    temperature: request.temperature ?? 0,
    stop: request.stop ?? [],
    threadId: request.threadId ?? null,
  };
}

/** Size and modification time: a replaced or re-exported model file is checked again. */
async function fileFingerprint(path: string): Promise<string> {
  try {
    const { size, mtimeMs } = await stat(path);
    return `${size}:${mtimeMs}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new EmbeddedModelError('not_found', `The model file ${path} does not exist. Check the configured model path.`);
    throw new EmbeddedModelError('unreadable', `The model file ${path} cannot be read (${code ?? 'unknown error'}). Check its path and permissions.`);
  }
}
