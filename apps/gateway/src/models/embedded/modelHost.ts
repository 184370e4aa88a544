/**
 * The model host: a child process that owns llama.cpp, so that an abort() inside it (a bad model
 * file, an out-of-memory) ends this process and not the gateway. Started by ModelHostProcess with
 * an IPC channel; loads one GGUF, then serves `generate` messages, streaming text back.
 *
 * Each warm thread owns a llama.cpp context sequence whose KV cache persists between requests:
 * a follow-up that repeats the thread's prompt is evaluated only from where it differs.
 */
import { getLlama, LlamaCompletion, LlamaLogLevel, type LlamaContextSequence, type LlamaModel, type Token } from 'node-llama-cpp';
import { EmbeddedModelError } from './EmbeddedModelError';
import {
  decodeGatewayMessage,
  type GatewayToHost,
  type GenerationJob,
  type GenerationSettings,
  type HostConfig,
  type HostToGateway,
} from './hostProtocol';

interface Slot {
  sequence: LlamaContextSequence;
  completion: LlamaCompletion;
  threadId: string | null;
  lastUsed: number;
  /** Generations on one sequence run one after another: the KV cache is a single timeline. */
  queue: Promise<void>;
  queued: number;
}

interface LoadedModel {
  model: LlamaModel;
  contextSize: number;
  slots: Slot[];
}

let loaded: LoadedModel | null = null;
let useCounter = 0;
const running = new Map<number, AbortController>();

function send(message: HostToGateway): void {
  // After the gateway hung up there is no one to tell; 'disconnect' below ends this process.
  if (process.connected) process.send?.(message);
}

async function load(config: HostConfig): Promise<void> {
  // node-llama-cpp says only "Failed to load model"; llama.cpp's log says why.
  const loadErrors: string[] = [];
  try {
    const llama = await getLlama({
      gpu: false,
      build: 'never', // never download or compile at run time: the prebuilt CPU binary or an error
      logLevel: LlamaLogLevel.warn,
      logger: (level, message) => {
        process.stderr.write(`[llama.cpp ${level}] ${message}\n`);
        if (level === LlamaLogLevel.error) loadErrors.push(message.trim());
      },
    });
    const model = await llama.loadModel({ modelPath: config.modelPath, gpuLayers: 0 });
    const trainContext = model.trainContextSize;
    const context = await model.createContext({
      contextSize: Math.min(config.contextSize, trainContext > 0 ? trainContext : config.contextSize),
      sequences: config.warmThreads,
      threads: config.cpuThreads,
    });
    const slots = Array.from({ length: config.warmThreads }, (): Slot => {
      const sequence = context.getSequence();
      return { sequence, completion: new LlamaCompletion({ contextSequence: sequence }), threadId: null, lastUsed: 0, queue: Promise.resolve(), queued: 0 };
    });
    loaded = { model, contextSize: context.contextSize, slots };
    const { prefix, suffix, middle } = model.tokens.infill;
    send({ type: 'ready', info: { contextSize: context.contextSize, canInfill: prefix != null && suffix != null && middle != null } });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // llama.cpp's log reaches JS through a thread-safe callback that can trail the rejection.
    for (let waitedMs = 0; loadErrors.length === 0 && waitedMs < 200; waitedMs += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The first error llama.cpp logged names the problem; later ones only repeat that it failed.
    send({ type: 'load_failed', message: (loadErrors[0] ?? reason).replace(/\s+/g, ' ') });
  }
}

/** The thread's own slot, else the least recently used idle one (its cache is given up). */
function slotFor(threadId: string | null, slots: Slot[]): Slot {
  const lru = (candidates: Slot[]) => candidates.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a));
  const owned = threadId === null ? undefined : slots.find((slot) => slot.threadId === threadId);
  const idle = slots.filter((slot) => slot.queued === 0);
  const slot = owned ?? lru(idle.length > 0 ? idle : slots);
  slot.threadId = threadId;
  slot.lastUsed = ++useCounter;
  return slot;
}

async function generate(id: number, job: GenerationJob, settings: GenerationSettings): Promise<void> {
  const controller = new AbortController();
  running.set(id, controller);
  try {
    if (!loaded) throw new EmbeddedModelError('generation_failed', 'The model host has no model loaded.');
    const model = loaded;
    const slot = slotFor(settings.threadId, model.slots);
    slot.queued++;
    const turn = slot.queue.then(() => runOnSlot(id, job, settings, model, slot, controller.signal));
    slot.queue = turn.catch(() => {}); // the failure is reported by this generation, below; the next one starts clean
    await turn.finally(() => slot.queued--);
  } catch (error) {
    if (error instanceof EmbeddedModelError) send({ type: 'error', id, code: error.code, message: error.message });
    else send({ type: 'error', id, code: 'generation_failed', message: `The embedded model failed while generating: ${(error as Error).message}` });
  } finally {
    running.delete(id);
  }
}

async function runOnSlot(id: number, job: GenerationJob, settings: GenerationSettings, loaded: LoadedModel, slot: Slot, signal: AbortSignal): Promise<void> {
  if (signal.aborted) {
    send({ type: 'end', id, finishReason: 'cancelled', inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 });
    return;
  }
  const { model, contextSize } = loaded;
  const bos = model.tokens.shouldPrependBosToken ? model.tokens.bos : null;
  const { body, maxTokens } = job.kind === 'complete' ? completionInput(model, job.prompt, contextSize, settings.maxTokens, bos) : infillInput(model, job, contextSize, settings.maxTokens, bos);
  // LlamaCompletion prepends the BOS token itself; the cache comparison must see it too.
  const input = bos === null ? body : [bos, ...body];
  // The last input token is always evaluated again: its logits pick the first output token.
  const cachedInputTokens = Math.min(slot.sequence.compareContextTokens(input).firstDifferentIndex, input.length - 1);

  // Counted by the sequence, not by onToken: tokens held back at the end (a partial UTF-8
  // character, a possible stop string) were still generated.
  const outputTokensBefore = slot.sequence.tokenMeter.usedOutputTokens;
  const result = await slot.completion.generateCompletionWithMeta(body, {
    signal,
    stopOnAbortSignal: true,
    maxTokens,
    temperature: settings.temperature,
    // Repetition is normal in code; sampling penalties belong to the model's own settings.
    repeatPenalty: false,
    customStopTriggers: settings.stop.length > 0 ? settings.stop : undefined,
    // Infill input is laid out around the FIM tokens: a context shift would cut them off.
    disableContextShift: job.kind === 'infill',
    onTextChunk: (text) => {
      if (text !== '' && !signal.aborted) send({ type: 'text', id, text });
    },
  });
  const outputTokens = slot.sequence.tokenMeter.usedOutputTokens - outputTokensBefore;
  const stopReason = result.metadata.stopReason;
  const finishReason = stopReason === 'abort' ? 'cancelled' : stopReason === 'maxTokens' ? 'length' : 'stop';
  send({ type: 'end', id, finishReason, inputTokens: input.length, cachedInputTokens, outputTokens });
}

function completionInput(model: LlamaModel, prompt: string, contextSize: number, maxTokens: number, bos: Token | null): { body: Token[]; maxTokens: number } {
  // Plain text: a "<eos>" typed in a file must not become the control token.
  const body = model.tokenize(prompt, false);
  // LlamaCompletion keeps a tenth of the window free and would silently drop the start of a longer prompt.
  const room = contextSize - Math.max(1, Math.floor(contextSize / 10)) - (bos === null ? 0 : 1);
  if (body.length > room) {
    throw new EmbeddedModelError('context_length', `The prompt is ${body.length} tokens; the embedded model's window holds ${room}. Shorten the conversation or configure a larger context.`);
  }
  return { body, maxTokens };
}

/**
 * Prefix-suffix-middle layout around the model's FIM tokens. When the window is short, the text
 * nearest the cursor wins: the end of the prefix, and the start of the suffix (at most a quarter
 * of the room unless the prefix leaves more).
 */
function infillInput(model: LlamaModel, job: Extract<GenerationJob, { kind: 'infill' }>, contextSize: number, requestedMaxTokens: number, bos: Token | null): { body: Token[]; maxTokens: number } {
  const { prefix: pre, suffix: suf, middle: mid } = model.tokens.infill;
  if (pre == null || suf == null || mid == null) {
    throw new EmbeddedModelError('infill_unsupported', 'The embedded model has no fill-in-the-middle tokens, so it cannot complete code at the cursor. Use a FIM-capable model for autocomplete.');
  }
  const maxTokens = Math.max(1, Math.min(requestedMaxTokens, Math.floor(contextSize / 2)));
  const room = contextSize - maxTokens - 3 - (bos === null ? 0 : 1);
  const prefixTokens = model.tokenize(job.prefix, false);
  const suffixTokens = model.tokenize(job.suffix, false);
  let suffixKeep = Math.min(suffixTokens.length, Math.floor(room / 4));
  const prefixKeep = Math.min(prefixTokens.length, room - suffixKeep);
  suffixKeep = Math.min(suffixTokens.length, room - prefixKeep);
  const body = [pre, ...prefixTokens.slice(prefixTokens.length - prefixKeep), suf, ...suffixTokens.slice(0, suffixKeep), mid];
  return { body, maxTokens };
}

function onMessage(raw: unknown): void {
  const message: GatewayToHost | null = decodeGatewayMessage(raw);
  if (message === null) {
    process.stderr.write(`model host: ignoring a malformed message ${JSON.stringify(raw)}\n`);
    return;
  }
  switch (message.type) {
    case 'load':
      void load(message.config);
      return;
    case 'generate':
      void generate(message.id, message.job, message.settings);
      return;
    case 'cancel':
      running.get(message.id)?.abort();
      return;
  }
}

process.on('message', onMessage);
// The gateway is gone (exited, crashed, killed): nothing is left to serve.
process.on('disconnect', () => process.exit(0));
