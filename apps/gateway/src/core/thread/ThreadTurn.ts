import type { ThreadAuthor, ThreadFileChange, ThreadTurnRecord } from '@flint/protocol';
import { ProviderError, type ModelEvent, type ModelMessage, type ModelProvider, type ToolCall, type ToolSpec } from '../ports/ModelProvider';
import { gatewayLapsedMessage } from '../agent/Turn';
import type { Clock, TimerHandle } from '../ports/Clock';
import { PatchArgument, TextPatchSplitter } from './patchSources';
import { PatchStream, type PatchTarget } from './PatchStream';
import { charsPerToken } from './threadPrompt';
import type { ThreadLog } from './ThreadLog';
import { APPLY_PATCH, runTool, type ToolWorkspace } from './threadTools';

/** How often the turn's record (live +/− counts, tokens/s) is rewritten while text moves. */
const recordIntervalMs = 100;

export interface ThreadTurnOptions {
  record: ThreadTurnRecord;
  provider: ModelProvider;
  model: string;
  /** `tools`: the model calls tools; `text`: it writes patches in its answer. */
  mode: 'tools' | 'text';
  tools: ToolSpec[];
  threadId: string;
  messages: ModelMessage[];
  maxOutputTokens: number;
  log: ThreadLog;
  workspace: ToolWorkspace & PatchTarget & { noteRead(fileId: string, text: string): void };
  clock: Clock;
  flushIntervalMs: number;
  limits: { toolCalls: number; tokens: number };
  /** The tokens a model call used; returns why the turn must stop (a budget spent), or null. */
  onUsage(tokens: number): string | null;
  /** Where the agent writes: its cursor in `fileId` (null: nowhere any more), with the text not committed yet. */
  cursor(fileId: string | null, caret: Record<string, unknown> | null, pending: string): void;
  onEnd(record: ThreadTurnRecord): void;
  /** Whether this gateway may still write (in a cluster: the others still count it in); see `abandon`. */
  mayWrite?(): boolean;
}

interface CallState {
  call: ToolCall;
  stepId: string;
  patch: { argument: PatchArgument; stream: PatchStream; buffered: string } | null;
}

/** One step of the loop: a model call, what it said and the tools it called. */
interface Step {
  messageId: string | null;
  text: string;
  textBuffer: string;
  calls: CallState[];
  /** Text mode: the answer's prose and patches, split as they stream. */
  splitter: TextPatchSplitter | null;
  textPatch: { stream: PatchStream; stepId: string } | null;
}

/**
 * One turn of the agent thread: a tool loop on the gateway (DESIGN §10). Each model call streams
 * its prose into the thread and its apply_patch calls into the files, both flushed every
 * `flushIntervalMs`; the other tools run when the call ends, their results go back to the
 * model, and it is called again until it answers without tools or a guardrail stops it.
 * Steering aborts the generation, keeps what it wrote, and continues with the new message; Stop
 * does the same and ends. Never rejects: failures end the turn with its error in the thread.
 */
export class ThreadTurn {
  private record: ThreadTurnRecord;
  private readonly messages: ModelMessage[];
  private generation: AbortController | null = null;
  /** The tool running now (a command): Stop ends it too. */
  private toolRun: AbortController | null = null;
  private steers: Array<{ text: string; author: ThreadAuthor }> = [];
  private stopReason: string | null = null;
  private ended = false;
  private step: Step | null = null;
  private flushTimer: TimerHandle | null = null;
  private recordTimer: TimerHandle | null = null;
  private lastFlushAt = Number.NEGATIVE_INFINITY;
  private lastRecordAt = Number.NEGATIVE_INFINITY;
  private firstOutputAt: number | null = null;
  /**
   * The time the model spent streaming, for tokens/s: each call's first output to its last.
   * Tools running and the next call's wait for its first token are not the model's speed.
   */
  private streamedMs = 0;
  private callOutput: { first: number; last: number } | null = null;
  private tokensUsed = 0;
  /** Per patch stream, what it did to each file: merged into the record's `files`. */
  private readonly patches: PatchStream[] = [];
  private readonly previousCalls: string[] = [];
  private cursorFile: string | null = null;
  /** Per doc, the number of the turn's next hunk there: every patch of the turn continues it. */
  private readonly hunkSeqs = new WeakMap<object, { next: number }>();

  constructor(private readonly options: ThreadTurnOptions) {
    this.record = options.record;
    this.messages = options.messages.slice();
  }

  get turnId(): string {
    return this.record.turnId;
  }

  get snapshot(): ThreadTurnRecord {
    return this.record;
  }

  /** Steer: the generation stops now (what it wrote stays) and the loop continues with this message. */
  steer(text: string, author: ThreadAuthor): void {
    if (this.ended) return;
    this.steers.push({ text, author });
    this.generation?.abort();
  }

  /** Esc / Stop: abort now; what was written stays for review. */
  stop(reason = 'Stopped.'): void {
    if (this.ended || this.stopReason !== null) return;
    this.stopReason = reason;
    this.generation?.abort();
    this.toolRun?.abort();
    // A stop while no generation runs (between steps) ends the turn here.
    if (!this.generation) this.finish('cancelled', null);
  }

  /**
   * Ends the turn at once, before the room's docs go (the room unloads): what it wrote stays,
   * the record says cancelled. The provider's stream is aborted and its end ignored.
   */
  stopNow(): void {
    if (this.ended) return;
    this.stopReason ??= 'Stopped.';
    this.generation?.abort();
    this.toolRun?.abort();
    if (this.step) {
      this.flush();
      this.endStep(true);
    }
    this.finish('cancelled', null);
  }

  /**
   * The others took this gateway for gone and ended the turn in the thread (failed): it writes
   * nothing more of the model's output — what arrived since its last flush is dropped — and its
   * record ends failed here too.
   */
  abandon(message: string): void {
    if (this.ended) return;
    this.stopReason ??= message;
    this.generation?.abort();
    this.toolRun?.abort();
    this.clearFlush();
    this.finish('failed', { code: 'internal', message });
  }

  /** A file the turn writes was deleted: its patch streams stop writing there. */
  fileDeleted(fileId: string): void {
    if (this.cursorFile === fileId) this.cursorFile = null;
  }

  async run(): Promise<void> {
    this.options.log.setTurn(this.record);
    try {
      for (;;) {
        if (this.ended) return;
        if (this.record.toolCalls >= this.options.limits.toolCalls) {
          return this.guardrail(`The turn made ${this.record.toolCalls} tool calls, the most one turn may make; it stopped there. Send a message to continue.`);
        }
        const outcome = await this.callModel();
        if (this.ended) return;
        if (outcome === 'stopped') return this.finish('cancelled', null);
        if (outcome === 'steered') continue;
        const calls = this.step?.calls ?? [];
        if (calls.length === 0 || this.options.mode === 'text') return this.finish('done', null);
        const repeated = await this.runTools(calls);
        if (this.ended) return;
        // Steered while a search ran (it yields): the next call hears the message.
        const steers = this.steers.splice(0);
        if (steers.length > 0) this.messages.push({ role: 'user', content: steers.map((s) => `${s.author.name}: ${s.text}`).join('\n') });
        if (repeated) return this.guardrail(`The model called ${repeated} twice in a row with the same arguments; the turn stopped so it does not loop.`);
      }
    } catch (error) {
      if (error instanceof ProviderError) return this.failed(error.code, error.message);
      this.failed('internal', 'The gateway hit an internal error in this turn.');
      throw error;
    } finally {
      this.clearFlush();
    }
  }

  /** One model call. Returns how it ended: normally, stopped, or steered (the loop goes on). */
  private async callModel(): Promise<'done' | 'stopped' | 'steered'> {
    const generation = new AbortController();
    this.generation = generation;
    this.step = { messageId: null, text: '', textBuffer: '', calls: [], splitter: this.options.mode === 'text' ? new TextPatchSplitter() : null, textPatch: null };
    this.record = { ...this.record, steps: this.record.steps + 1, context: this.fitWindow() };
    this.writeRecord();
    const stream = this.options.provider.stream(
      {
        model: this.options.model,
        messages: this.messages,
        maxOutputTokens: this.options.maxOutputTokens,
        temperature: 0,
        threadId: this.options.threadId,
        tools: this.options.mode === 'tools' ? this.options.tools : undefined,
      },
      generation.signal,
    );
    try {
      await this.consume(stream, generation.signal);
    } catch (error) {
      this.endStreaming();
      // A failure mid-answer: what arrived is applied and kept, like an interruption.
      this.generation = null;
      if (this.ended) return 'stopped';
      this.flush();
      this.endStep(true);
      throw error;
    }
    this.endStreaming();
    this.generation = null;
    if (this.ended) return 'stopped';
    const interrupted = generation.signal.aborted || this.stopReason !== null;
    this.flush();
    this.endStep(interrupted);
    if (this.stopReason !== null) {
      if (!/^Stopped/.test(this.stopReason)) this.notice(this.stopReason, 'info');
      return 'stopped';
    }
    const steers = this.steers.splice(0);
    if (steers.length > 0) {
      this.continueAfterSteer(steers);
      return 'steered';
    }
    return 'done';
  }

  private async consume(stream: AsyncIterable<ModelEvent>, signal: AbortSignal): Promise<void> {
    const step = this.step!;
    for await (const event of stream) {
      if (signal.aborted) break;
      if (this.options.mayWrite?.() === false) return this.abandon(gatewayLapsedMessage);
      if (event.type === 'text') {
        this.noteOutput(event.tokens ?? 1);
        step.text += event.text;
        step.textBuffer += event.text;
        this.scheduleFlush();
      } else if (event.type === 'tool-call') {
        this.noteOutput(0);
        this.flush();
        this.startCall(event.index, event.id, event.name);
      } else if (event.type === 'tool-call-delta') {
        this.noteOutput(event.tokens ?? 1);
        const call = step.calls[step.calls.length - 1];
        if (!call) continue;
        call.call.arguments += event.arguments;
        if (call.patch) {
          call.patch.buffered += event.arguments;
          this.scheduleFlush();
        }
      } else if (event.type === 'usage') {
        this.tokensUsed += event.inputTokens + event.outputTokens;
        const over = this.options.onUsage(event.inputTokens + event.outputTokens);
        if (over) this.stopReason ??= over;
        else if (this.tokensUsed > this.options.limits.tokens) {
          this.stopReason ??= `The turn used ${this.tokensUsed.toLocaleString('en')} tokens, the most one turn may use; it stopped there.`;
        }
        if (this.stopReason !== null) return;
      }
    }
  }

  /**
   * Keeps the loop's messages within the model's window: tool results grow it at every step, so
   * the oldest ones are replaced by a line saying so (the model can call the tool again).
   * Returns the window's use for the record's meter.
   */
  private fitWindow(): ThreadTurnRecord['context'] {
    const { windowTokens } = this.record.context;
    const budget = windowTokens - this.options.maxOutputTokens - 256;
    const size = () => this.messages.reduce((n, m) => n + Math.ceil(m.content.length / charsPerToken) + 4, 0);
    let used = size();
    let elided = 0;
    for (let i = 0; i < this.messages.length && used > budget; i++) {
      const message = this.messages[i]!;
      if (message.role !== 'tool' || message.content.length <= 200) continue;
      this.messages[i] = { ...message, content: '[This output was left out to fit the window; call the tool again if you need it.]' };
      elided++;
      used = size();
    }
    const trimmed = elided
      ? `${this.record.context.trimmed ? `${this.record.context.trimmed} ` : ''}${elided} earlier tool output${elided === 1 ? ' was' : 's were'} left out to fit the window.`
      : this.record.context.trimmed;
    return { usedTokens: used, windowTokens, trimmed };
  }

  private noteOutput(tokens: number): void {
    if (this.firstOutputAt === null) {
      this.firstOutputAt = this.options.clock.now();
      this.record = { ...this.record, ttftMs: this.firstOutputAt - this.record.startedAt };
    }
    const now = this.options.clock.now();
    if (this.callOutput) this.callOutput.last = now;
    else this.callOutput = { first: now, last: now };
    this.record.outputTokens += tokens;
  }

  private endStreaming(): void {
    if (this.callOutput) this.streamedMs += this.callOutput.last - this.callOutput.first;
    this.callOutput = null;
  }

  private startCall(index: number, id: string, name: string): void {
    const step = this.step!;
    const isPatch = name === APPLY_PATCH;
    const stepId = this.options.log.append({ kind: 'tool', turnId: this.turnId, tool: name, summary: isPatch ? 'editing…' : `${name}…`, status: 'running' });
    const patch = isPatch ? { argument: new PatchArgument(), stream: this.patchStream(stepId), buffered: '' } : null;
    step.calls[index] = { call: { id, name, arguments: '' }, stepId, patch };
    this.record = { ...this.record, toolCalls: this.record.toolCalls + 1 };
  }

  private patchStream(stepId: string): PatchStream {
    const stream: PatchStream = new PatchStream(this.turnId, this.options.workspace, {
      changed: (change) => {
        this.options.log.update(stepId, { summary: `editing ${change.path}`, path: change.path, line: change.line });
        this.files();
      },
      wrote: (fileId, caret) => this.moveCursor(fileId, caret, stream.provisional),
    }, this.hunkSeqs);
    this.patches.push(stream);
    return stream;
  }

  private moveCursor(fileId: string, caret: Record<string, unknown>, pending: string): void {
    if (this.cursorFile !== null && this.cursorFile !== fileId) this.options.cursor(this.cursorFile, null, '');
    this.cursorFile = fileId;
    this.options.cursor(fileId, caret, pending);
  }

  private scheduleFlush(): void {
    const now = this.options.clock.now();
    if (now - this.lastFlushAt >= this.options.flushIntervalMs) return this.flush();
    if (this.flushTimer !== null) return;
    this.flushTimer = this.options.clock.setTimeout(() => {
      this.flushTimer = null;
      if (!this.ended) this.flush();
    }, Math.max(0, this.lastFlushAt + this.options.flushIntervalMs - now));
  }

  private clearFlush(): void {
    if (this.flushTimer !== null) this.options.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
  }

  private clearRecordTimer(): void {
    if (this.recordTimer !== null) this.options.clock.clearTimeout(this.recordTimer);
    this.recordTimer = null;
  }

  /** Applies what arrived since the last flush: prose into the thread, patch text into the files. */
  private flush(): void {
    this.clearFlush();
    const step = this.step;
    if (!step) return;
    const now = this.options.clock.now();
    this.lastFlushAt = now;
    if (step.textBuffer) {
      const text = step.textBuffer;
      step.textBuffer = '';
      if (step.splitter) this.splitText(step, text);
      else this.appendProse(step, text);
    }
    for (const call of step.calls) {
      if (!call?.patch || !call.patch.buffered) continue;
      const json = call.patch.buffered;
      call.patch.buffered = '';
      call.patch.stream.push(call.patch.argument.push(json));
    }
    if (now - this.lastRecordAt >= recordIntervalMs) this.writeRecord();
    else if (this.recordTimer === null) {
      // Text that stops moving still shows in the record: written once the interval is up.
      this.recordTimer = this.options.clock.setTimeout(() => {
        this.recordTimer = null;
        if (!this.ended) this.writeRecord();
      }, this.lastRecordAt + recordIntervalMs - now);
    }
  }

  private appendProse(step: Step, text: string): void {
    if (!text) return;
    if (step.messageId === null) step.messageId = this.options.log.append({ kind: 'assistant', turnId: this.turnId }, text);
    else this.options.log.appendText(step.messageId, text);
  }

  /** Text mode: prose to the thread, `*** Begin Patch` … `*** End Patch` into the files. */
  private splitText(step: Step, text: string): void {
    const part = step.splitter!.push(text);
    this.appendProse(step, part.prose);
    if (part.patchStarts && !step.textPatch) {
      const stepId = this.options.log.append({ kind: 'tool', turnId: this.turnId, tool: APPLY_PATCH, summary: 'editing…', status: 'running' });
      step.textPatch = { stream: this.patchStream(stepId), stepId };
    }
    if (part.patch) step.textPatch?.stream.push(part.patch);
    if (part.patchEnds && step.textPatch) {
      this.endPatch(step.textPatch.stream, step.textPatch.stepId, false, null);
      step.textPatch = null;
    }
  }

  /** The model call ended (or was cut off): close its patches and its message. */
  private endStep(interrupted: boolean): void {
    const step = this.step!;
    if (step.splitter) this.appendProse(step, step.splitter.finish());
    if (step.textPatch) this.endPatch(step.textPatch.stream, step.textPatch.stepId, interrupted, null);
    for (const call of step.calls) {
      if (call?.patch) this.endPatch(call.patch.stream, call.stepId, interrupted, call.patch.argument.error);
      else if (call && interrupted) this.options.log.update(call.stepId, { status: 'failed', summary: `${call.call.name}: interrupted` });
    }
    this.cursorAway();
    this.writeRecord();
  }

  private endPatch(stream: PatchStream, stepId: string, interrupted: boolean, argumentError: string | null): void {
    if (interrupted) stream.interrupt();
    else stream.finish();
    const changes = stream.changed();
    const added = changes.reduce((n, c) => n + c.added, 0);
    const removed = changes.reduce((n, c) => n + c.removed, 0);
    const files = changes.length === 1 ? changes[0]!.path : `${changes.length} files`;
    const failures = [...stream.failures, ...(argumentError ? [`The apply_patch arguments are not valid JSON: ${argumentError}`] : [])];
    const summary = changes.length ? `edited ${files} +${added} −${removed}${interrupted ? ' (interrupted)' : ''}` : interrupted ? 'edit interrupted' : 'edit applied nothing';
    this.options.log.update(stepId, {
      summary,
      status: failures.length && !changes.length ? 'failed' : 'done',
      detail: failures.length ? failures.join('\n') : undefined,
      path: changes[0]?.path,
      line: changes[0]?.line,
    });
    this.files();
  }

  /** Runs the step's tools and tells the model their results; returns a repeated call's name, if any. */
  private async runTools(calls: CallState[]): Promise<string | null> {
    const step = this.step!;
    this.messages.push({ role: 'assistant', content: step.text, toolCalls: calls.filter(Boolean).map((state) => state.call) });
    for (const state of calls) {
      if (!state) continue;
      const key = `${state.call.name}\u0000${state.call.arguments}`;
      const repeated = this.previousCalls[this.previousCalls.length - 1] === key && !state.patch;
      this.previousCalls.push(key);
      let output: string;
      if (state.patch) output = state.patch.stream.summary();
      else if (repeated) output = 'You already made this call with the same arguments; the turn stops here.';
      else {
        this.toolRun = new AbortController();
        const outcome = await runTool(this.options.workspace, state.call.name, state.call.arguments, this.options.clock, this.toolRun.signal).finally(() => (this.toolRun = null));
        // A search yields to I/O: the turn may have been stopped meanwhile.
        if (this.ended) return null;
        output = outcome.output;
        if (outcome.read) this.options.workspace.noteRead(outcome.read.fileId, outcome.read.text);
        this.options.log.update(state.stepId, { summary: outcome.summary, status: outcome.ok ? 'done' : 'failed', detail: outcome.ok ? undefined : outcome.output, path: outcome.path, line: outcome.line });
      }
      this.messages.push({ role: 'tool', callId: state.call.id, content: output });
      if (repeated) {
        this.options.log.update(state.stepId, { status: 'failed', summary: `${state.call.name}: repeated`, detail: output });
        return state.call.name;
      }
    }
    this.writeRecord();
    return null;
  }

  /** After a steer: the partial answer, what its patches did, then the new message(s). */
  private continueAfterSteer(steers: Array<{ text: string; author: ThreadAuthor }>): void {
    const step = this.step!;
    const done = step.calls.filter((call) => call?.patch).map((call) => call.patch!.stream.summary());
    // Text mode: the patch written in the answer was cut off too.
    if (step.textPatch) done.push(step.textPatch.stream.summary());
    const partial = [step.text, ...done].filter(Boolean).join('\n');
    if (partial) this.messages.push({ role: 'assistant', content: `${partial}\n[interrupted]` });
    const words = steers.map((s) => `${s.author.name}: ${s.text}`).join('\n');
    this.messages.push({
      role: 'user',
      content: `${words}\n(You were interrupted while writing; everything you wrote so far is kept in the files. Continue from there with this in mind.)`,
    });
  }

  private cursorAway(): void {
    if (this.cursorFile === null) return;
    this.options.cursor(this.cursorFile, null, '');
    this.cursorFile = null;
  }

  /** The record's files: what every patch of the turn did, per file. */
  private files(): void {
    const byFile = new Map<string, ThreadFileChange>();
    for (const stream of this.patches) {
      for (const change of stream.changed()) {
        const seen = byFile.get(change.fileId);
        byFile.set(
          change.fileId,
          seen
            ? { ...seen, path: change.path, added: seen.added + change.added, removed: seen.removed + change.removed, line: Math.min(seen.line, change.line), deleted: change.deleted ?? seen.deleted }
            : change,
        );
      }
    }
    this.record = { ...this.record, files: [...byFile.values()] };
  }

  private writeRecord(): void {
    this.clearRecordTimer();
    const now = this.options.clock.now();
    this.lastRecordAt = now;
    const elapsed = this.streamedMs + (this.callOutput ? now - this.callOutput.first : 0);
    this.record = { ...this.record, tokensPerSecond: elapsed > 0 ? (this.record.outputTokens * 1000) / elapsed : null, agentClients: this.agentClients() };
    this.options.log.setTurn(this.record);
  }

  private agentClients(): Record<string, number> {
    const clients: Record<string, number> = { ...this.record.agentClients };
    for (const change of this.record.files) {
      const doc = this.options.workspace.docOf(change.fileId);
      if (doc) clients[change.fileId] = this.options.workspace.peerOf(doc).clientId;
    }
    return clients;
  }

  private notice(text: string, level: 'info' | 'error'): void {
    this.options.log.append({ kind: 'notice', turnId: this.turnId, level }, text);
  }

  private guardrail(message: string): void {
    this.notice(message, 'info');
    this.finish('done', { code: 'guardrail', message });
  }

  private failed(code: NonNullable<ThreadTurnRecord['error']>['code'], message: string): void {
    if (this.ended) return;
    this.generation?.abort();
    const wrote = this.record.files.length > 0 ? ' What it wrote before that is in the files for review.' : '';
    this.notice(`${message}${wrote}`, 'error');
    this.finish('failed', { code, message: message + wrote });
  }

  private finish(status: ThreadTurnRecord['status'], error: ThreadTurnRecord['error']): void {
    if (this.ended) return;
    this.ended = true;
    this.clearFlush();
    if (this.step && this.generation) {
      this.generation.abort();
      this.generation = null;
    }
    this.cursorAway();
    this.files();
    this.record = { ...this.record, status, error, endedAt: this.options.clock.now() };
    this.writeRecord();
    this.options.onEnd(this.record);
  }
}
