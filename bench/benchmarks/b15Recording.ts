/**
 * B15 — recording and replay (issue 37), in-process:
 *
 * 1. Recording overhead: the gateway's CPU per agent token of a thread turn (the real thread
 *    engine; the model's stream from a ReplayProvider with every event at t=0, so the turn runs
 *    as fast as the gateway can take it), without and with a SessionRecorder on the room,
 *    interleaved turn by turn in the same run. Goal: ≤ 1.1×.
 * 2. Replay throughput and memory: a synthetic session of three people typing (about 3 keystrokes
 *    a second each) and the agent streaming a turn every few minutes, for an hour (smoke: 5 min),
 *    recorded as a flint-recording; the Replayer rebuilds it (events per second, heap used), beside
 *    the same updates applied straight to Y.Docs (the floor: Yjs itself).
 */
import { replayThreadTurn, turnsOf } from '@flint/gateway/testing';
import * as Y from 'yjs';
import { FILE_TEXT_KEY } from '@flint/protocol';
import {
  createGateway,
  demoWorkspaceFiles,
  parseRecording,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  Replayer,
  ReplayProvider,
  SessionRecorder,
  SqliteStore,
  systemClock,
  writeRecording,
  type ModelEvent,
  type RecordedFrame,
  type Recording,
} from '@flint/gateway';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { summarize } from '../lib/percentile';

/** A turn that writes `lines` new lines into src/format.ts, one token (~4 characters) per event, all at t=0. */
function bigTurn(lines: number): { recording: Recording; tokens: number } {
  const added = Array.from({ length: lines }, (_, i) => `+export const value${i} = ${i} * 2; // generated`).join('\n');
  const patch = `*** Begin Patch\n*** Update File: src/format.ts\n@@\n   return tasks.map(formatTask).join('\\n');\n }\n${added}\n*** End Patch\n`;
  const args = JSON.stringify({ patch });
  const frames: RecordedFrame[] = [];
  const push = (answer: number, event: ModelEvent) => frames.push({ t: 0, ch: 'model', answer, event });
  push(0, { type: 'tool-call', index: 0, id: 'c0', name: 'apply_patch' });
  for (let i = 0; i < args.length; i += 4) push(0, { type: 'tool-call-delta', index: 0, arguments: args.slice(i, i + 4) });
  push(0, { type: 'done', finishReason: 'tool_calls' });
  push(1, { type: 'text', text: 'Done.' });
  push(1, { type: 'done', finishReason: 'stop' });
  return { recording: { format: RECORDING_FORMAT, version: RECORDING_VERSION, title: 'bench', prompt: 'Add values.', label: 'bench replay', frames }, tokens: Math.ceil(args.length / 4) };
}

async function turnCpuPerToken(recorded: boolean, lines: number): Promise<number> {
  const store = new SqliteStore(':memory:');
  const gateway = createGateway({}, { store, clock: systemClock });
  const created = gateway.createWorkspace('B15', demoWorkspaceFiles);
  const held = gateway.holdRoom(created.workspaceId)!;
  const recorder = recorded ? new SessionRecorder(held.room, systemClock, 'bench') : null;
  const { recording, tokens } = bigTurn(lines);
  const routed = { provider: new ReplayProvider(recording, systemClock, 1), model: 'bench', contextTokens: 128_000, supportsPrediction: false, supportsTools: true };
  const before = process.cpuUsage();
  const started = await replayThreadTurn(gateway, created.workspaceId, created.owner.token, 'Bench', recording.prompt, routed);
  if (!started.ok) throw new Error(started.message);
  while (turnsOf(held.room).thread) await new Promise((resolve) => setTimeout(resolve, 2));
  const used = process.cpuUsage(before);
  const frames = recorder?.stop().frames.length ?? 0;
  if (recorded && frames < 3) throw new Error('the recorder saw nothing');
  held.release();
  gateway.shutdown();
  store.close();
  return (used.user + used.system) / 1000 / tokens;
}

/** An hour (or `minutes`) of three people typing and the agent streaming, as a recording. */
function syntheticSession(minutes: number): Recording {
  const frames: RecordedFrame[] = [];
  const base64 = (u: Uint8Array) => Buffer.from(u).toString('base64');
  const docs = ['f1', 'f2', 'f3'].map((id) => ({ id, doc: new Y.Doc() }));
  for (const { id, doc } of docs) {
    doc.getText(FILE_TEXT_KEY).insert(0, 'export const start = 1;\n'.repeat(40));
    frames.push({ t: 0, ch: 'update', doc: id, data: base64(Y.encodeStateAsUpdate(doc)) });
  }
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const durationMs = minutes * 60_000;
  const events: Array<{ t: number; who: number; agent: boolean }> = [];
  for (let who = 0; who < 3; who++) for (let t = rand() * 300; t < durationMs; t += 200 + rand() * 260) events.push({ t, who, agent: false });
  // The agent: a 2,000-token turn every ~4 minutes, flushed every 16 ms (~60 tokens a flush).
  for (let start = 60_000; start < durationMs; start += 240_000) for (let k = 0; k < 34; k++) events.push({ t: start + k * 16, who: Math.floor(rand() * 3), agent: true });
  events.sort((a, b) => a.t - b.t);
  for (const event of events) {
    const { id, doc } = docs[event.who]!;
    const text = doc.getText(FILE_TEXT_KEY);
    let update: Uint8Array | null = null;
    const capture = (u: Uint8Array) => (update = u);
    doc.once('update', capture);
    if (event.agent) text.insert(Math.floor(rand() * text.length), 'const agentValue = compute(input); '.repeat(7));
    else if (rand() < 0.2 && text.length > 10) text.delete(Math.floor(rand() * (text.length - 2)), 1);
    else text.insert(Math.floor(rand() * text.length), 'abcdefghijklmnopqrstuvwxyz'[Math.floor(rand() * 26)]!);
    if (update) frames.push({ t: Math.round(event.t), ch: 'update', doc: id, data: base64(update) });
  }
  return { format: RECORDING_FORMAT, version: RECORDING_VERSION, title: 'synthetic', prompt: '', label: 'recording', frames };
}

export const b15Recording: Benchmark = {
  id: 'B15',
  name: 'b15-recording',
  title: 'recording overhead per agent token, and replay throughput of an hour of three people and the agent',
  async run(ctx): Promise<BenchReport> {
    const reps = ctx.smoke ? 2 : 8;
    const lines = ctx.smoke ? 60 : 1500;
    const without: number[] = [];
    const withRecording: number[] = [];
    await turnCpuPerToken(false, 20); // warm-up: JIT, SQLite pages
    for (let i = 0; i < reps; i++) {
      // Interleaved, alternating which goes first.
      const order = i % 2 === 0 ? [false, true] : [true, false];
      for (const recorded of order) (recorded ? withRecording : without).push(await turnCpuPerToken(recorded, lines));
      ctx.progress(`turn pair ${i + 1}/${reps}`);
    }
    const a = summarize(without);
    const b = summarize(withRecording);
    const ratio = b.p50 / a.p50;

    const minutes = ctx.smoke ? 5 : 60;
    const session = syntheticSession(minutes);
    const text = writeRecording(session);
    ctx.progress('session built');
    const heapBefore = process.memoryUsage().heapUsed;
    const replayStart = performance.now();
    const replayer = new Replayer(parseRecording(text));
    const docs = replayer.seek(replayer.durationMs);
    const replayMs = performance.now() - replayStart;
    const heapAfter = process.memoryUsage().heapUsed;
    const updates = session.frames.length;
    // The floor: the same updates decoded and applied straight to Y.Docs.
    const floorStart = performance.now();
    const floor = new Map<string, Y.Doc>();
    for (const frame of session.frames) {
      if (frame.ch !== 'update') continue;
      let doc = floor.get(frame.doc);
      if (!doc) floor.set(frame.doc, (doc = new Y.Doc()));
      Y.applyUpdate(doc, new Uint8Array(Buffer.from(frame.data, 'base64')));
    }
    const floorMs = performance.now() - floorStart;
    for (const [id, doc] of floor) if (doc.getText(FILE_TEXT_KEY).toString() !== docs.get(id)?.getText(FILE_TEXT_KEY).toString()) throw new Error(`replay of ${id} differs`);
    // Scrubbing back to the middle, then forward to the end again.
    const scrubStart = performance.now();
    replayer.seek(replayer.durationMs / 2);
    replayer.seek(replayer.durationMs);
    const scrubMs = performance.now() - scrubStart;

    const eventsPerSecond = updates / (replayMs / 1000);
    return {
      tables: [
        {
          title: 'Gateway CPU per agent token (ms), thread turn of the real engine',
          columns: ['arm', 'p50', 'p95', 'n'],
          rows: [
            ['no recording', a.p50.toFixed(4), a.p95.toFixed(4), String(without.length)],
            ['recording', b.p50.toFixed(4), b.p95.toFixed(4), String(withRecording.length)],
            ['ratio (p50)', ratio.toFixed(3), '', ''],
          ],
        },
        {
          title: `Replay of ${minutes} min of three people and the agent (${updates} updates, ${(text.length / 1e6).toFixed(1)} MB)`,
          columns: ['what', 'ms', 'updates/s', 'heap MB'],
          rows: [
            ['Replayer: parse + rebuild to the end', replayMs.toFixed(0), eventsPerSecond.toFixed(0), ((heapAfter - heapBefore) / 1e6).toFixed(1)],
            ['floor: Y.applyUpdate only', floorMs.toFixed(0), (updates / (floorMs / 1000)).toFixed(0), ''],
            ['scrub to the middle and back to the end', scrubMs.toFixed(0), '', ''],
          ],
        },
      ],
      targets: [{ name: 'recording overhead per token', target: '≤ 1.1× without recording', actual: `${ratio.toFixed(3)}×`, met: ctx.smoke ? null : ratio <= 1.1 }],
      data: { without: a, withRecording: b, ratio, replay: { minutes, updates, bytes: text.length, replayMs, floorMs, scrubMs, eventsPerSecond, heapMb: (heapAfter - heapBefore) / 1e6 } },
    };
  },
};
