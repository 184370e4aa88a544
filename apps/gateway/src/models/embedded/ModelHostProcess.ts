/**
 * The gateway's side of one model host process (modelHost.ts): starts it in its own process
 * group, routes its messages to the generation they belong to, and turns its death into an
 * `EmbeddedModelError` for every generation in flight.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EmbeddedModelError } from './EmbeddedModelError';
import {
  decodeHostMessage,
  type GatewayToHost,
  type GenerationJob,
  type GenerationSettings,
  type HostConfig,
  type HostModelInfo,
  type HostToGateway,
} from './hostProtocol';

export type HostEvent =
  | { type: 'text'; text: string }
  | { type: 'end'; finishReason: 'stop' | 'length'; inputTokens: number; cachedInputTokens: number; outputTokens: number };

type Delivery = { message: Extract<HostToGateway, { id: number }> } | { failure: EmbeddedModelError };

/** Plain JavaScript that registers tsx and imports modelHost.ts: no build step, any working directory. */
const hostEntry = fileURLToPath(new URL('./modelHostEntry.mjs', import.meta.url));
const LOG_TAIL_LINES = 20;

export class ModelHostProcess {
  private nextId = 1;
  private readonly generations = new Map<number, (delivery: Delivery) => void>();
  private exitError: EmbeddedModelError | null = null;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly info: HostModelInfo,
    /** The host's last log lines (llama.cpp prints why it aborts), shared with the reader in start(). */
    private readonly logTail: readonly string[],
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (raw: unknown) => {
      const message = decodeHostMessage(raw);
      if (message === null || !('id' in message)) {
        process.stderr.write(`embedded model: ignoring a malformed message from the host: ${JSON.stringify(raw)}\n`);
        return;
      }
      // A generation that was cancelled or abandoned has no listener: its late messages are dropped.
      this.generations.get(message.id)?.({ message });
    });
    // Sends report through their callback; what is left (a failed kill) must not crash the gateway.
    child.on('error', (error) => process.stderr.write(`embedded model host: ${error.message}\n`));
    child.once('exit', (code, signal) => {
      this.exitError = crashError('generating', code, signal, this.logTail);
      for (const deliver of this.generations.values()) deliver({ failure: this.exitError });
    });
  }

  /**
   * Starts a host and loads the model. Rejects with `load_failed` when llama.cpp refuses the
   * file and `host_crashed` when it takes the process down with it; the process is gone then.
   */
  static start(config: HostConfig): Promise<ModelHostProcess> {
    const child = spawn(process.execPath, [hostEntry], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
      // Its own process group: the host and anything it spawns are killed together.
      detached: true,
    });
    const logTail: string[] = [];
    const keepLog = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') logTail.push(line.trim());
      logTail.splice(0, Math.max(0, logTail.length - LOG_TAIL_LINES));
    };
    child.stdout?.on('data', keepLog);
    child.stderr?.on('data', keepLog);

    return new Promise((resolve, reject) => {
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        child.off('message', onFirstMessage);
        reject(crashError('loading', code, signal, logTail));
      };
      const onError = (error: Error) => {
        child.off('exit', onExit);
        child.off('message', onFirstMessage);
        killGroup(child);
        reject(new EmbeddedModelError('host_crashed', `The embedded model host could not start: ${error.message}.`));
      };
      const onFirstMessage = (raw: unknown) => {
        const message = decodeHostMessage(raw);
        if (message?.type !== 'ready' && message?.type !== 'load_failed') return;
        child.off('message', onFirstMessage);
        child.off('exit', onExit);
        child.off('error', onError);
        if (message.type === 'load_failed') {
          killGroup(child);
          reject(new EmbeddedModelError('load_failed', `llama.cpp could not load ${config.modelPath}: ${message.message}. Point Flint at another model file.`));
          return;
        }
        resolve(new ModelHostProcess(child, message.info, logTail));
      };
      child.once('exit', onExit);
      child.once('error', onError);
      child.on('message', onFirstMessage);
      ModelHostProcess.send(child, { type: 'load', config });
    });
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  get alive(): boolean {
    return this.exitError === null;
  }

  /**
   * Streams one generation. Once `signal` aborts, the iterator returns without yielding more and
   * the host is told to stop; the same happens when the consumer stops reading early.
   */
  async *generate(job: GenerationJob, settings: GenerationSettings, signal: AbortSignal): AsyncGenerator<HostEvent> {
    if (signal.aborted) return;
    if (this.exitError) throw this.exitError;
    const id = this.nextId++;
    const inbox: Delivery[] = [];
    let wake: (() => void) | null = null;
    this.generations.set(id, (delivery) => {
      inbox.push(delivery);
      wake?.();
    });
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    let finished = false;
    try {
      ModelHostProcess.send(this.child, { type: 'generate', id, job, settings });
      for (;;) {
        if (inbox.length === 0 && !signal.aborted) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        if (signal.aborted) return;
        const delivery = inbox.shift()!;
        if ('failure' in delivery) {
          finished = true;
          throw delivery.failure;
        }
        const { message } = delivery;
        if (message.type === 'text') {
          yield { type: 'text', text: message.text };
        } else if (message.type === 'error') {
          finished = true;
          throw new EmbeddedModelError(message.code, message.message);
        } else {
          finished = true;
          // 'cancelled' only answers a cancel, and a cancelled generation has stopped listening.
          const finishReason = message.finishReason === 'length' ? 'length' : 'stop';
          yield { type: 'end', finishReason, inputTokens: message.inputTokens, cachedInputTokens: message.cachedInputTokens, outputTokens: message.outputTokens };
          return;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.generations.delete(id);
      if (!finished && this.alive) ModelHostProcess.send(this.child, { type: 'cancel', id });
    }
  }

  /** Kills the host's process group and waits until it is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) killGroup(this.child);
    await this.exited;
  }

  private static send(child: ChildProcess, message: GatewayToHost): void {
    if (!child.connected) return; // a host that just died cannot take it; its 'exit' reports the failure
    // With a callback a failed send is reported here instead of as an 'error' event nobody handles.
    child.send(message, (error) => {
      if (error) process.stderr.write(`embedded model: could not message the host (${error.message}); its exit will fail the request\n`);
    });
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    // ESRCH: the group is already gone, which is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

function crashError(when: 'loading' | 'generating', code: number | null, signal: NodeJS.Signals | null, logTail: readonly string[]): EmbeddedModelError {
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  const lastLine = logTail.at(-1);
  const advice =
    when === 'loading'
      ? 'llama.cpp cannot load this file: point Flint at another model file.'
      : 'The next request starts a new host; if this repeats, check the model file and free memory.';
  return new EmbeddedModelError('host_crashed', `The embedded model host ${how} while ${when}${lastLine ? ` (last log: ${lastLine})` : ''}. ${advice}`);
}
