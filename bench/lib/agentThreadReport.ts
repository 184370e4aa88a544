/**
 * B11's tables and targets (bench/benchmarks/b11AgentThread.ts): per edit kind and arm, the lag
 * of each added token to the collaborator's screen; per panel state, the page's frames.
 */
import type { BenchReport, TargetCheck } from './Benchmark';
import { percentile, summarize, type Summary } from './percentile';
import { settleMs, type EditKind } from './threadTabs';
import { markdownAnswer } from './threadAnswers';

export type { EditKind };

export type EditArm = 'thread' | 'inline' | 'floor';
export type PanelArm = 'open' | 'closed';
const editArmNames: Record<EditArm, string> = {
  thread: 'thread: panel message → apply_patch → collaborator',
  inline: 'inline: Ctrl-K → collaborator (B10)',
  floor: 'floor: raw relay → page (B10)',
};
const panelArmNames: Record<PanelArm, string> = { open: 'agent panel open (Markdown rendered)', closed: 'agent panel closed (thread doc followed)' };

export interface Plan {
  edits: EditKind[];
  editRate: number;
  /** Marked tokens the first file gets (a multiple of 8): the measured ones. */
  firstFileTokens: number;
  /** The thread's second hunk, in the file the collaborator does not have open. */
  secondFileTokens: number;
  editRepetitions: number;
  markdownRate: number;
  markdownRepetitions: number;
  warm: boolean;
  /** Screenshots of the panel (an extra, slower Markdown turn) and of the first thread turn's end. */
  shots: boolean;
}

export interface EditSample {
  edit: EditKind;
  arm: EditArm;
  lagsMs: number[];
  missed: number;
  provisional: number;
  frameGapsMs: number[];
  probeMsPerS: number;
  /** Thread: what the gateway told the model the patch did, and how the turn ended. */
  toolResult?: string;
  turnStatus?: string;
  /** Thread: output tokens the turn's record counted, and the deltas the provider wrote (both answers). */
  turnTokens?: number;
  providerTokens?: number;
}

export interface MarkdownSample {
  arm: PanelArm;
  frameGapsMs: number[];
  loafs: number;
  loafMaxMs: number;
  blockingMs: number;
  windowMs: number;
  /** Open: the provider wrote the last token → the frame that painted the answer's end. */
  endLagMs: number | null;
  turnStatus: string;
  /** The long animation frames' scripts: invoker and source → ms (where the long frames went). */
  loafScripts: Record<string, number>;
  /** Those frames' rendering (style, layout, paint) ms. */
  loafRenderMs: number;
}

interface EditRow {
  edit: EditKind;
  arm: EditArm;
  streams: number;
  lag: Summary;
  p90: number;
  missed: number;
  provisionalShare: number | null;
  frameP95: number;
  probeMsPerS: number;
  /** Thread: streams whose patch changed both files and whose turn ended done. */
  applied: string | null;
}

interface PanelRow {
  arm: PanelArm;
  streams: number;
  frame: Summary;
  over33: number;
  loafs: number;
  loafMaxMs: number;
  blockingMsPerS: number;
  endLag: Summary | null;
}

export const tenth = (ms: number) => Math.round(ms * 10) / 10;

/** Where an arm's long animation frames went: the scripts that ran longest in them, summed. */
function topScripts(samples: MarkdownSample[]): Array<[string, number]> {
  const total = new Map<string, number>();
  for (const sample of samples) for (const [script, ms] of Object.entries(sample.loafScripts)) total.set(script, (total.get(script) ?? 0) + ms);
  return [...total].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([script, ms]) => [script, tenth(ms)]);
}

function editRow(samples: EditSample[], edit: EditKind, arm: EditArm): EditRow {
  const lags = samples.flatMap((s) => s.lagsMs).sort((a, b) => a - b);
  const tokens = samples.reduce((n, s) => n + s.lagsMs.length + s.missed, 0);
  const applied = samples.filter((s) => s.turnStatus === 'done' && (s.toolResult?.match(/^updated /gm)?.length ?? 0) === 2 && !/not applied|malformed/.test(s.toolResult ?? ''));
  return {
    edit,
    arm,
    streams: samples.length,
    lag: summarize(lags),
    p90: percentile(lags, 90),
    missed: samples.reduce((n, s) => n + s.missed, 0),
    provisionalShare: arm === 'floor' || tokens === 0 ? null : samples.reduce((n, s) => n + s.provisional, 0) / tokens,
    frameP95: percentile(samples.flatMap((s) => s.frameGapsMs), 95),
    probeMsPerS: Math.max(0, ...samples.map((s) => s.probeMsPerS)),
    applied: arm === 'thread' ? `${applied.length} of ${samples.length}` : null,
  };
}

function panelRow(samples: MarkdownSample[], arm: PanelArm): PanelRow {
  const frames = samples.flatMap((s) => s.frameGapsMs);
  const windowS = samples.reduce((n, s) => n + s.windowMs, 0) / 1000;
  const ends = samples.flatMap((s) => (s.endLagMs === null ? [] : [s.endLagMs]));
  return {
    arm,
    streams: samples.length,
    frame: summarize(frames),
    over33: frames.filter((gap) => gap > 33.4).length,
    loafs: samples.reduce((n, s) => n + s.loafs, 0),
    loafMaxMs: Math.max(0, ...samples.map((s) => s.loafMaxMs)),
    blockingMsPerS: windowS > 0 ? samples.reduce((n, s) => n + s.blockingMs, 0) / windowS : 0,
    endLag: arm === 'open' ? summarize(ends) : null,
  };
}

export function agentThreadReport(plan: Plan, editSamples: EditSample[], markdownSamples: MarkdownSample[], screenshots: string[]): BenchReport {
  const editRows = plan.edits.flatMap((edit) => (['floor', 'inline', 'thread'] as const).map((arm) => editRow(editSamples.filter((s) => s.edit === edit && s.arm === arm), edit, arm)));
  const peer = (r: EditRow, arm: EditArm) => editRows.find((p) => p.edit === r.edit && p.arm === arm)!;
  const panelRows = markdownSamples.length > 0 ? (['closed', 'open'] as const).map((arm) => panelRow(markdownSamples.filter((s) => s.arm === arm), arm)) : [];
  const closed = panelRows.find((r) => r.arm === 'closed');
  const tables: BenchReport['tables'] = [];
  if (editRows.length > 0) {
    tables.push({
      title: `B11 edit: token written by the provider → painted in the collaborator's editor, ${plan.editRate} tokens/s (ms)`,
      columns: ['edit', 'arm', 'streams', 'n', 'p50', 'p90', 'p99', 'max', 'thread ÷ inline p50', 'p90', 'p99', '− floor p90', 'missed', 'first shown provisional', 'frame p95', 'probe ms/s', 'patch applied'],
      rows: editRows.map((r) => {
        const inline = peer(r, 'inline');
        const ratio = r.arm === 'thread' ? [r.lag.p50 / inline.lag.p50, r.p90 / inline.p90, r.lag.p99 / inline.lag.p99] : [null, null, null];
        const provisional = r.provisionalShare === null ? null : `${(r.provisionalShare * 100).toFixed(0)}%`;
        return [r.edit, editArmNames[r.arm], String(r.streams), String(r.lag.n), r.lag.p50, r.p90, r.lag.p99, r.lag.max, ...ratio, r.arm === 'floor' ? null : r.p90 - peer(r, 'floor').p90, String(r.missed), provisional, r.frameP95, r.arm === 'floor' ? null : r.probeMsPerS, r.applied];
      }),
      notes: [
        "lag = the paced provider wrote the token → the start of the frame that painted it in the collaborator's editor (floor: the first frame after the page received it); every added token carries its own marker, eight to a line (B10's method).",
        `thread: the prompter sends a message from the agent panel; the model says a sentence and calls apply_patch, whose JSON arguments stream one token per delta: one hunk of ${plan.firstFileTokens} marked tokens in the file the collaborator has open, then one of ${plan.secondFileTokens} in a second file; the gateway's follow-up request (with the tool's result) gets a one-line answer. Only the first file's tokens are measured.`,
        `inline: B10's arm — the prompter's Ctrl-K box; the answer is the same ${plan.firstFileTokens} marked tokens at the same place of a fresh copy of the same file. floor: B10's floor page receiving them from the raw relay.`,
        "insert: the lines go after the file's import (thread: a hunk of context lines and added lines; inline: the prompt on the empty line 3). rewrite: they replace the 10-line function (B10's hard case: shown provisional first).",
        "the collaborator's agent panel is closed in this part (its tab still follows the thread doc); the prompter's is open and in the background.",
        `patch applied = thread turns that ended done with the tool's result reporting both files updated. missed = tokens never painted within ${settleMs / 1000} s of the stream's end. Arms interleaved in random order per repetition; ${plan.warm ? 'one 80-token warm-up stream per arm first' : 'no warm-up'}.`,
      ],
    });
  }
  if (panelRows.length > 0) {
    tables.push({
      title: `B11 markdown: the collaborator's frames while the thread streams ${markdownAnswer().text.length} tokens of Markdown at ${plan.markdownRate} tokens/s (ms)`,
      columns: ['panel', 'streams', 'frames', 'rAF p50', 'rAF p95', 'rAF p99', 'rAF max', '÷ closed p95', '÷ closed p99', 'gaps > 33 ms', 'LoAF n', 'LoAF max', 'blocking ms/s', 'end on screen p50', 'end max'],
      rows: panelRows.map((r) => [
        panelArmNames[r.arm],
        String(r.streams),
        String(r.frame.n),
        r.frame.p50,
        r.frame.p95,
        r.frame.p99,
        r.frame.max,
        closed ? r.frame.p95 / closed.frame.p95 : null,
        closed ? r.frame.p99 / closed.frame.p99 : null,
        String(r.over33),
        String(r.loafs),
        r.loafMaxMs,
        r.blockingMsPerS,
        r.endLag?.p50 ?? null,
        r.endLag?.max ?? null,
      ]),
      notes: [
        `the same page (an editor link, a file open) with its agent panel open or closed, toggled before each turn and interleaved in random order; a third client sends the message. The answer: ${(markdownAnswer().text.join('').length / 1024).toFixed(1)} KB of Markdown (headings, paragraphs, lists, inline code, two fenced TypeScript blocks), one ~4-character token per delta.`,
        'rAF = intervals between requestAnimationFrame callbacks from the first token written to 50 ms after the last (open: or to the frame that painted the answer\'s end, if later); 16.7 ms is every frame on time. LoAF = long animation frames (> 50 ms), blocking = their blockingDuration per second.',
        "end on screen = the provider wrote the last token → the start of the frame that painted the answer's last words in the panel (bench/lib/answerEndProbe.ts).",
        plan.warm ? 'One warm-up turn per arm first.' : 'No warm-up.',
      ],
    });
  }
  return {
    tables,
    targets: targetsOf(editRows, panelRows),
    data: {
      plan,
      markdownTokens: markdownAnswer().text.length,
      screenshots,
      editRows,
      panelRows,
      longFrameScripts: Object.fromEntries((['open', 'closed'] as const).map((arm) => [arm, topScripts(markdownSamples.filter((s) => s.arm === arm))])),
      editSamples: editSamples.map(({ lagsMs, frameGapsMs, ...rest }) => ({ ...rest, lagsMs: lagsMs.map(tenth), frameGapsMs: frameGapsMs.map(tenth) })),
      markdownSamples: markdownSamples.map(({ frameGapsMs, ...rest }) => ({ ...rest, frameGapsMs: frameGapsMs.map(tenth) })),
    },
  };
}

/**
 * The thread writes a patch's lines with the same flush and the same edit ops as the inline
 * edit (decision 0022), so its lag may exceed the inline edit's by at most one more flush
 * (8 ms); both are held to B10's bound over the floor (one flush + one frame, decision 0020).
 * The panel is held to B5's frame targets, and its answer to the same bound as the editor's text.
 */
function targetsOf(editRows: EditRow[], panelRows: PanelRow[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const ms = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(1)} ms`;
  for (const thread of editRows.filter((r) => r.arm === 'thread')) {
    const inline = editRows.find((r) => r.edit === thread.edit && r.arm === 'inline')!;
    const floor = editRows.find((r) => r.edit === thread.edit && r.arm === 'floor')!;
    const over = thread.p90 - inline.p90;
    checks.push({ name: `thread − inline lag p90 (${thread.edit})`, target: '≤ +8 ms (one flush)', actual: `${ms(over)} (${thread.p90.toFixed(1)} vs ${inline.p90.toFixed(1)}; ${(thread.p90 / inline.p90).toFixed(2)}×)`, met: over <= 8 });
    for (const r of [thread, inline]) {
      const overFloor = r.p90 - floor.p90;
      checks.push({ name: `${r.arm} lag p90 over the floor (${r.edit})`, target: '≤ +24.7 ms (one flush + one frame, decision 0020)', actual: `${ms(overFloor)} (${r.p90.toFixed(1)} vs ${floor.p90.toFixed(1)})`, met: overFloor <= 24.7 });
    }
    checks.push({ name: `thread tokens that never reached the screen (${thread.edit})`, target: '0', actual: String(thread.missed), met: thread.missed === 0 });
    checks.push({ name: `thread turns whose patch changed both files (${thread.edit})`, target: 'all', actual: thread.applied ?? '–', met: thread.applied === `${thread.streams} of ${thread.streams}` });
  }
  const open = panelRows.find((r) => r.arm === 'open');
  const closed = panelRows.find((r) => r.arm === 'closed');
  if (open && closed) {
    checks.push({ name: 'rAF p95, panel streaming Markdown', target: '≤ 20 ms (B5)', actual: `${open.frame.p95.toFixed(1)} ms (panel closed: ${closed.frame.p95.toFixed(1)})`, met: open.frame.p95 <= 20 });
    checks.push({ name: 'longest animation frame, panel streaming Markdown', target: 'none > 50 ms (B5)', actual: open.loafs === 0 ? 'none > 50 ms' : `${open.loafMaxMs.toFixed(0)} ms, ${open.loafs} frames (panel closed: ${closed.loafs === 0 ? 'none' : `${closed.loafMaxMs.toFixed(0)} ms, ${closed.loafs}`})`, met: open.loafs === 0 });
    const end = open.endLag;
    checks.push({ name: "last token → the answer's end on screen, p50", target: '≤ 24.7 ms (one flush + one frame)', actual: end && end.n > 0 ? `${end.p50.toFixed(1)} ms (max ${end.max.toFixed(1)})` : 'never seen', met: end !== null && end.n > 0 && end.p50 <= 24.7 });
  }
  return checks;
}
