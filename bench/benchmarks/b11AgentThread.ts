/**
 * B11 — the agent thread (issue 23), side by side in one headless Chromium, on the real gateway.
 * The token source speaks Chat Completions SSE with tool calls (bench/lib/pacedAnswer.ts): one
 * delta is one token, paced by PacedTokenServer; the gateway's follow-up request (carrying the
 * tool's result) gets a short text.
 * 1. edit — provider token → text on a collaborator's screen, 1,000 tokens/s. Arms interleaved
 *    in random order per repetition, on fresh copies of the same files:
 *    - thread: the prompter sends a message from the agent panel; the model answers with one
 *      apply_patch call adding lines to two files (one hunk each), decoded as it streams into
 *      live edits; the collaborator has the first file open;
 *    - inline: B10's arm — the prompter asks through the Ctrl-K box and the answer is the same
 *      lines at the same place of the same file;
 *    - floor: B10's floor page (raw relay, a message per read) receiving the same lines.
 *    Every added token carries its own marker; lag = the provider wrote it → the start of the
 *    frame that painted it in the collaborator's editor (bench/lib/editorScreenProbe.ts, as B10).
 *    `insert` adds the lines after the file's import; `rewrite` (B10's hard case, B11_EDITS)
 *    replaces the 10-line function with them, which first shows as provisional text.
 * 2. markdown — the collaborator's frames while the thread streams a ~6 KB Markdown answer at
 *    2,000 tokens/s, the same page with its agent panel open vs closed (it follows the thread doc
 *    either way; only the rendering differs), arms interleaved; B5's method (rAF intervals, long
 *    animation frames, bench/lib/browserProbe.ts). Open: also when the answer's end was painted.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import type { FlintClient } from '@flint/client';
import { readThread } from '@flint/protocol';
import { agentThreadReport, tenth, type EditArm, type EditKind, type EditSample, type MarkdownSample, type PanelArm, type Plan } from '../lib/agentThreadReport';
import { watchAnswerEnd } from '../lib/answerEndProbe';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ensureBuilt, ideWebRoot, launchProbedBrowser, serveControls, waitForQuiet } from '../lib/browserHarness';
import { ChildHost } from '../lib/ChildHost';
import { connectFlintClient } from '../lib/connectFlintClient';
import { installEditorScreenProbe, type EditorScreenData } from '../lib/editorScreenProbe';
import type { PacedScript, StreamRecord } from '../lib/PacedTokenServer';
import { gapsOf } from '../lib/percentile';
import { shuffled } from '../lib/shuffled';
import { followUpAnswer, markdownAnswer, markdownAnswerEnd, patchAnswer, threadFileFunction, threadFileText, type HunkPlan } from '../lib/threadAnswers';
import { askAgent, floorStream, nextFrame, openFloor, openIde, setPanel, settleMs, startFrames, stopFrames } from '../lib/threadTabs';
import { pause, until } from '../lib/until';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const b11AgentThread: Benchmark = {
  id: 'B11',
  name: 'b11-agent-thread',
  title: "the agent thread: a two-file patch to a collaborator's screen vs the inline edit, and the page while the panel streams Markdown",
  async run(ctx): Promise<BenchReport> {
    // B11_PARTS=edit|markdown, B11_EDITS=insert,rewrite, B11_REPS / B11_MD_REPS (per arm),
    // B11_TOKENS (the first file's, a multiple of 8), B11_WARMUP=0|1, B11_SHOTS=0|1 narrow or
    // widen a run.
    const env = (name: string) => process.env[name];
    const parts = env('B11_PARTS')?.split(',') ?? ['edit', 'markdown'];
    const plan: Plan = {
      edits: parts.includes('edit') ? ((env('B11_EDITS')?.split(',') as EditKind[] | undefined) ?? (ctx.smoke ? ['insert'] : ['insert', 'rewrite'])) : [],
      editRate: 1000,
      firstFileTokens: Number(env('B11_TOKENS') ?? (ctx.smoke ? 40 : 160)),
      secondFileTokens: ctx.smoke ? 16 : 80,
      editRepetitions: Number(env('B11_REPS') ?? (ctx.smoke ? 1 : 5)),
      markdownRate: 2000,
      markdownRepetitions: parts.includes('markdown') ? Number(env('B11_MD_REPS') ?? (ctx.smoke ? 1 : 8)) : 0,
      warm: env('B11_WARMUP') ? env('B11_WARMUP') === '1' : !ctx.smoke,
      shots: env('B11_SHOTS') ? env('B11_SHOTS') === '1' : !ctx.smoke,
    };
    // Smoke proves B11 runs: it does not wait for each page to settle before a stream.
    const quiet = ctx.smoke ? nextFrame : waitForQuiet;
    // B11_NO_BUILD=1: measure apps/web/dist as it is (an e2e run may be using it) instead of
    // rebuilding it when its sources are newer.
    if (env('B11_NO_BUILD') === '1') ctx.log('B11_NO_BUILD=1: the IDE as built in apps/web/dist, however stale');
    else ensureBuilt(ctx.log);
    const shotDir = join(repoRoot, 'bench', 'results', ctx.smoke ? 'smoke' : '', 'screenshots');
    mkdirSync(shotDir, { recursive: true });
    const screenshots: string[] = [];
    const shoot = async (page: Page, name: string) => {
      const path = join(shotDir, `b11-${name}.png`);
      await page.screenshot({ path });
      screenshots.push(path.slice(repoRoot.length + 1));
    };

    const provider = await ChildHost.start('paced-provider');
    const [gateway, relay] = await Promise.all([
      // The thread's own guardrails (tokens per turn and per workspace-hour) are not under test.
      ChildHost.start('gateway', { providerBaseUrl: provider.url, webRoot: ideWebRoot(), agent: { threadTokensPerTurn: 1e12, threadTokensPerWorkspaceHour: 1e12 } }),
      ChildHost.start('relay', { providerBaseUrl: provider.url, perRead: true }),
    ]);
    const controls = await serveControls();
    const { browser, context } = await launchProbedBrowser();
    await context.addInitScript({ content: `globalThis.__name = (f) => f; (${installEditorScreenProbe.toString()})();` });
    ctx.progress('servers and the browser started');

    const editSamples: EditSample[] = [];
    const markdownSamples: MarkdownSample[] = [];
    let watcher: FlintClient | null = null;
    try {
      const streams = plan.edits.length * plan.editRepetitions + (plan.warm ? 1 : 0);
      const files: Record<string, string> = {};
      for (let k = 0; k < streams; k++) for (const name of ['a', 'b', 's']) files[`${name}${k}.ts`] = threadFileText(`B11-${name}-${k}`);
      const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B11', files });
      const editorToken = await gateway.call<string>('shareEditor', { workspaceId });
      const ide = (t: string) => `http://127.0.0.1:${String(gateway.info.port)}/w/${workspaceId}#token=${t}`;
      // A third person, in Node: sees every turn end (and sends the Markdown turns).
      watcher = await connectFlintClient(gateway.url, workspaceId, token);
      const thread = watcher.openThread();
      await thread.whenSynced();
      const turns = () => readThread(thread.doc).turns;
      const editing = plan.edits.length > 0;
      const [collaborator, prompter, floor] = await Promise.all([openIde(context, ide(editorToken), 'closed'), editing ? openIde(context, ide(token), 'open') : null, editing ? openFloor(context, controls.url, relay.url) : null]);
      ctx.progress('pages open');

      if (prompter && floor) {
        /** One stream of `arm` on copy `k` of the files (thread: a<k>.ts and b<k>.ts; inline: s<k>.ts). */
        const measure = async (edit: EditKind, arm: EditArm, k: number, firstTokens: number, secondTokens: number): Promise<EditSample> => {
          if (arm === 'thread') {
            const first = threadFileText(`B11-a-${k}`);
            const hunk = (path: string, text: string, tokens: number): HunkPlan =>
              edit === 'insert'
                ? { path, context: text.split('\n').slice(0, 2), removed: [], tokens, after: '' }
                : { path, context: text.split('\n').slice(0, 3), removed: threadFileFunction(text), tokens, after: '' };
            const answers = { answer: patchAnswer([hunk(`a${k}.ts`, first, firstTokens), hunk(`b${k}.ts`, threadFileText(`B11-b-${k}`), secondTokens)]), followUp: followUpAnswer([`a${k}.ts`, `b${k}.ts`]) };
            await provider.call('configure', { tokens: 0, tokensPerSecond: plan.editRate, answers } satisfies PacedScript);
          } else {
            await provider.call('configure', { tokens: firstTokens, tokensPerSecond: plan.editRate, markers: 'token' } satisfies PacedScript);
          }
          let result: EditorScreenData;
          let turnStatus: string | undefined;
          let turnTokens: number | undefined;
          if (arm === 'floor') result = await floorStream(floor, firstTokens);
          else {
            const turnsBefore = turns().length;
            result = await askAgent({ prompter, collaborator, provider, arm, edit, k, tokens: firstTokens, rate: plan.editRate, quiet, progress: ctx.progress });
            if (arm === 'thread') {
              // The next message would steer this turn: it must have ended (its follow-up answered).
              await until(() => turns().length > turnsBefore && turns().every((t) => t.status !== 'streaming'), 'the thread turn to end', settleMs, 20);
              turnStatus = turns().at(-1)!.status;
              turnTokens = turns().at(-1)!.outputTokens;
            }
          }
          const records = await provider.call<StreamRecord[]>('streams');
          const answer = records.find((r) => r.markerSentAt);
          const sentAt = answer?.markerSentAt ?? [];
          const lagsMs: number[] = [];
          let missed = 0;
          for (let marker = 0; marker < firstTokens; marker++) {
            const shown = result.screenAt[marker];
            const sent = sentAt[marker];
            if (shown === undefined || sent === undefined || Number.isNaN(sent)) missed++;
            else lagsMs.push(shown - sent);
          }
          const from = sentAt[0] ?? Number.NaN;
          const to = Math.max(...Object.values(result.screenAt));
          const recordedS = ((result.frames.at(-1) ?? 0) - (result.frames[0] ?? 0)) / 1000;
          return {
            edit,
            arm,
            lagsMs,
            missed,
            provisional: result.provisional.filter((m) => m < firstTokens).length,
            frameGapsMs: gapsOf(result.frames.filter((t) => t >= from && t <= to)),
            probeMsPerS: recordedS > 0 ? result.scanMs / recordedS : 0,
            toolResult: records.find((r) => r.toolResult !== undefined)?.toolResult,
            turnStatus,
            turnTokens,
            providerTokens: arm === 'thread' ? records.reduce((n, r) => n + r.tokens, 0) : undefined,
          };
        };

        let photographed = !plan.shots;
        /** After the first thread turn (not while measuring): both tabs once it ended. */
        const photograph = async (arm: EditArm) => {
          if (photographed || arm !== 'thread') return;
          photographed = true;
          await prompter.bringToFront();
          await shoot(prompter, 'thread-prompter-end');
          await collaborator.bringToFront();
          await shoot(collaborator, 'thread-collaborator-end');
        };
        if (plan.warm) {
          for (const arm of shuffled<EditArm>(['thread', 'inline', 'floor'])) {
            await measure(plan.edits[0]!, arm, 0, 80, 40);
            await photograph(arm);
          }
          ctx.progress('warm-up stream on every arm');
        }
        let copy = plan.warm ? 1 : 0;
        for (const edit of plan.edits) {
          ctx.log(`edit (${edit}) at ${plan.editRate} tokens/s: ${plan.firstFileTokens} tokens in the file on the collaborator's screen (thread: + ${plan.secondFileTokens} in a second file), ${plan.editRepetitions}× each arm`);
          for (let rep = 0; rep < plan.editRepetitions; rep++, copy++) {
            for (const arm of shuffled<EditArm>(['thread', 'inline', 'floor'])) {
              editSamples.push(await measure(edit, arm, copy, plan.firstFileTokens, plan.secondFileTokens));
              await photograph(arm);
              ctx.progress(`${arm}, ${edit}, repetition ${rep + 1}`);
            }
          }
        }
        await prompter.close();
        await floor.close();
      }

      if (plan.markdownRepetitions > 0) {
        ctx.log(`markdown at ${plan.markdownRate} tokens/s: a ${markdownAnswer().text.length}-token answer, ${plan.markdownRepetitions}× each arm`);
        const ask = async (rate: number): Promise<number> => {
          await provider.call('configure', { tokens: 0, tokensPerSecond: rate, answers: { answer: markdownAnswer() } } satisfies PacedScript);
          const turnsBefore = turns().length;
          const sent = await watcher!.threadSend({ text: 'Why does the rate limiter let a reconnecting client through?' });
          if (!sent.ok) throw new Error(`the thread refused the message: ${JSON.stringify(sent)}`);
          return turnsBefore;
        };
        const turnEnded = (turnsBefore: number) => until(() => turns().length > turnsBefore && turns().every((t) => t.status !== 'streaming'), 'the Markdown turn to end', settleMs, 20);
        if (plan.shots) {
          // Not measured: slower, so the picture is caught mid-answer (a code block still open).
          await setPanel(collaborator, true);
          await quiet(collaborator);
          const before = await collaborator.evaluate(() => document.querySelectorAll('[data-kind="assistant"] .thread-md').length);
          const turnsBefore = await ask(400);
          await collaborator.waitForFunction((n) => {
            const all = document.querySelectorAll('[data-kind="assistant"] .thread-md');
            return all.length > n && /export class RateLimiter/.test(all[all.length - 1]!.textContent ?? '');
          }, before, { timeout: settleMs, polling: 'raf' });
          await shoot(collaborator, 'panel-mid-stream');
          await turnEnded(turnsBefore);
          await quiet(collaborator);
          await shoot(collaborator, 'panel-end');
          ctx.progress('the panel photographed mid-answer and at its end');
        }
        const markdownTurn = async (arm: PanelArm): Promise<MarkdownSample> => {
          await setPanel(collaborator, arm === 'open');
          await quiet(collaborator);
          if (arm === 'open') await collaborator.evaluate(watchAnswerEnd, markdownAnswerEnd);
          await startFrames(collaborator);
          const turnsBefore = await ask(plan.markdownRate);
          await turnEnded(turnsBefore);
          const record = (await provider.call<StreamRecord[]>('streams')).at(-1)!;
          let endAt: number | null = null;
          if (arm === 'open') {
            await collaborator.waitForFunction(() => (window as unknown as { __benchAnswerEnd: number | null }).__benchAnswerEnd !== null, null, { timeout: 5_000, polling: 50 }).catch(() => undefined);
            endAt = await collaborator.evaluate(() => (window as unknown as { __benchAnswerEnd: number | null }).__benchAnswerEnd);
          }
          // A frame or two after the last token, for what the page still does with it.
          const last = record.lastTokenAt ?? Date.now();
          await pause(Math.max(0, last + 100 - Date.now()));
          const probe = await stopFrames(collaborator);
          const from = record.firstTokenAt ?? Number.NaN;
          const to = Math.max(last + 50, endAt ?? 0);
          const loafs = probe.loafs.filter((l) => l.start + l.duration >= from && l.start <= to);
          const loafScripts: Record<string, number> = {};
          for (const script of loafs.flatMap((l) => l.scripts)) loafScripts[`${script.invoker} ${script.source}`] = tenth((loafScripts[`${script.invoker} ${script.source}`] ?? 0) + script.ms);
          return {
            arm,
            frameGapsMs: gapsOf(probe.frames.filter((t) => t >= from && t <= to)),
            loafs: loafs.length,
            loafMaxMs: Math.max(0, ...loafs.map((l) => l.duration)),
            blockingMs: loafs.reduce((n, l) => n + l.blocking, 0),
            windowMs: to - from,
            endLagMs: endAt === null ? null : endAt - last,
            turnStatus: turns().at(-1)!.status,
            loafScripts,
            loafRenderMs: tenth(loafs.reduce((n, l) => n + l.renderMs, 0)),
          };
        };
        if (plan.warm) {
          for (const arm of shuffled<PanelArm>(['open', 'closed'])) await markdownTurn(arm);
          ctx.progress('warm-up Markdown turn on both arms');
        }
        for (let rep = 0; rep < plan.markdownRepetitions; rep++) {
          for (const arm of shuffled<PanelArm>(['open', 'closed'])) {
            markdownSamples.push(await markdownTurn(arm));
            ctx.progress(`panel ${arm}, repetition ${rep + 1}`);
          }
        }
      }
    } finally {
      watcher?.destroy();
      await browser.close();
      await controls.close();
      await Promise.all([provider.stop(), gateway.stop(), relay.stop()]);
    }
    return agentThreadReport(plan, editSamples, markdownSamples, screenshots);
  },
};

