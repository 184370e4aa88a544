/**
 * B8 — autocomplete latency: a keystroke at the client until the ghost text is ready, through
 * the real gateway (FlintClient over a real WebSocket → CompletionService → the complete
 * route's adapter), against the same provider asked directly, in the same run, interleaved:
 *
 * (a) fake FIM provider (`lib/FimTokenServer.ts`: OpenAI-compatible /v1/completions, the Qwen
 *     FIM template as e2e configures it, a fixed first-token delay). Control: the bench process
 *     POSTs the same rendered prompt to the same fake itself.
 * (b) the embedded model (EmbeddedProvider + models/flint-tiny.gguf, or the test-kit's tiny
 *     random llama when that file is missing), as main.ts builds the complete route. Control:
 *     `EmbeddedProvider.infill` called in this process with the same prefix/suffix/settings
 *     (its own model host process, like the gateway's).
 *
 * Arms: the raw engine (keystroke sent, then `client.complete` at once: first `complete.delta`
 * and the `complete.result` that makes ghost text), and the real `Completer` (edited() →
 * adaptive debounce → request → suggestion). The debounce is a policy, not overhead: it is
 * measured (edited → request) and reported, and left out of "added".
 */
import http from 'node:http';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdaptiveDebounce, Completer, type CompletionStream, type EditorState, type FlintClient, type Timers } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { makeTinyLlamaGguf } from '@flint/test-kit';
import type * as Y from 'yjs';
import { defaultCompletionConfig, EmbeddedProvider } from '@flint/gateway';
import { buildCompletionContext, fimTemplate, type CompletionContext } from '@flint/gateway/testing';
import type { Benchmark, BenchReport } from '../lib/Benchmark';
import { ChildHost } from '../lib/ChildHost';
import { connectFlintClient, fileIdOf } from '../lib/connectFlintClient';
import type { FimScript } from '../lib/FimTokenServer';
import { summarize, type Summary } from '../lib/percentile';
import { pause } from '../lib/until';
import { shuffled } from '../lib/shuffled';

interface Sample {
  /** Keystroke → first text (first complete.delta / first provider chunk). */
  firstMs: number;
  /** Keystroke → ghost text ready (complete.result / end of the provider stream / Completer's suggestion). */
  readyMs: number;
  /** Completer only: edited() → request sent (the debounce). */
  debounceMs?: number;
  /** Gateway only: request → result as the gateway measured it. */
  gatewayMs?: number;
  /** Characters of the suggestion (direct: of the stream). */
  chars: number;
}

interface Arm {
  name: string;
  kind: 'direct' | 'engine' | 'completer';
  measure(): Promise<Sample>;
  samples: Sample[];
}

const firstTokenMs = 20;
/** Typing rhythm the Completer sees: one keystroke per iteration, ~7 keys/s. */
const keystrokeEveryMs = 150;
const fakeChunks = ['filter(', '(item) => ', 'item.price', ' > 0', ').length'];
const fakeSuggestion = fakeChunks.join('');

/**
 * A small file; the keystroke types the "." after `items` on the cursor line (then is undone).
 * At this spot flint-tiny answers a full single line (64 tokens); in a longer file it answers
 * nothing (a newline first), which would measure prompt evaluation only.
 */
const head = 'import { Item } from "./item";\n\nexport function count(items: Item[]) {\n  return items';
const tail = ');\n}\n';
const fileText = head + tail;
const cursor = head.length;
const timers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => performance.now(),
};

export const b8Autocomplete: Benchmark = {
  id: 'B8',
  name: 'b8-autocomplete',
  title: 'autocomplete: keystroke → ghost text, gateway vs the provider asked directly',
  async run(ctx): Promise<BenchReport> {
    const iterations = ctx.smoke ? 8 : 150;
    const warmup = ctx.smoke ? 2 : 10;
    const tmp = mkdtempSync(join(tmpdir(), 'flint-bench-b8-'));
    const shippedModel = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'models', 'flint-tiny.gguf');
    let modelPath = shippedModel;
    if (!existsSync(modelPath)) {
      modelPath = join(tmp, 'tiny.gguf');
      writeFileSync(modelPath, makeTinyLlamaGguf());
    }
    const modelName = modelPath === shippedModel ? 'models/flint-tiny.gguf' : 'test-kit tiny llama (random weights)';
    const fim = await ChildHost.start('fim-provider');
    const script: FimScript = { chunks: fakeChunks, firstTokenMs, gapMs: 1 };
    await fim.call('configure', script);
    const [gatewayFake, gatewayEmbedded] = await Promise.all([
      ChildHost.start('gateway', { complete: { kind: 'openai-chat', baseUrl: fim.url, model: 'qwen2.5-coder-bench', fimTemplate: 'qwen' } }),
      ChildHost.start('gateway', { complete: { kind: 'embedded', modelPath } }),
    ]);
    const direct = new EmbeddedProvider({ modelPath });
    ctx.log(`${iterations} keystrokes per arm (+${warmup} warm-up), arms interleaved in random order, one keystroke every ≥ ${keystrokeEveryMs} ms; fake: first token after ${firstTokenMs} ms; embedded: ${modelName}`);

    const results: Array<{ scenario: string; arm: string; kind: Arm['kind']; firstMs: Summary; readyMs: Summary; debounceMs: Summary | null; gatewayMs: Summary | null; engineMs: Summary | null; chars: Summary; empty: number }> = [];
    const scenarios = [
      { name: 'fake FIM provider', gateway: gatewayFake, control: directFakeArm(fim.url), allowEmpty: false },
      { name: 'embedded model', gateway: gatewayEmbedded, control: directEmbeddedArm(direct), allowEmpty: true },
    ];
    const gatewayCpu: Array<{ scenario: string; requests: number; cpuMsPerRequest: number }> = [];
    try {
      for (const scenario of scenarios) {
        const { engine, completer, close } = await gatewayArms(scenario.gateway, scenario.allowEmpty);
        const arms = [scenario.control, engine, completer];
        const cpuBefore = await scenario.gateway.stats();
        for (let i = 0; i < warmup + iterations; i++) {
          const started = performance.now();
          for (const arm of shuffled(arms)) {
            const sample = await arm.measure();
            if (i >= warmup) arm.samples.push(sample);
            await pause(2 + Math.random() * 4);
          }
          const left = keystrokeEveryMs - (performance.now() - started);
          if (left > 0) await pause(left);
        }
        const cpuAfter = await scenario.gateway.stats();
        const requests = (warmup + iterations) * 2;
        const cpuMs = (cpuAfter.cpu.user + cpuAfter.cpu.system - cpuBefore.cpu.user - cpuBefore.cpu.system) / 1000;
        gatewayCpu.push({ scenario: scenario.name, requests, cpuMsPerRequest: cpuMs / requests });
        close();
        for (const arm of arms) {
          const debounce = arm.samples.filter((s) => s.debounceMs !== undefined);
          const gatewayMs = arm.samples.filter((s) => s.gatewayMs !== undefined);
          results.push({
            scenario: scenario.name,
            arm: arm.name,
            kind: arm.kind,
            firstMs: summarize(arm.samples.map((s) => s.firstMs)),
            readyMs: summarize(arm.samples.map((s) => s.readyMs)),
            debounceMs: debounce.length ? summarize(debounce.map((s) => s.debounceMs!)) : null,
            gatewayMs: gatewayMs.length ? summarize(gatewayMs.map((s) => s.gatewayMs!)) : null,
            // The Completer's keystroke → suggestion with its debounce taken out.
            engineMs: debounce.length ? summarize(arm.samples.map((s) => s.readyMs - s.debounceMs!)) : null,
            chars: summarize(arm.samples.map((s) => s.chars)),
            empty: arm.samples.filter((s) => s.chars === 0).length,
          });
        }
      }
    } finally {
      await direct.close();
      await Promise.all([fim.stop(), gatewayFake.stop(), gatewayEmbedded.stop()]);
      rmSync(tmp, { recursive: true, force: true });
    }

    const find = (scenario: string, kind: Arm['kind']) => results.find((r) => r.scenario === scenario && r.kind === kind)!;
    const added = (scenario: string, kind: Arm['kind'], p: 'p50' | 'p95') => {
      const control = find(scenario, 'direct');
      const row = find(scenario, kind);
      return (kind === 'completer' ? row.engineMs! : row.readyMs)[p] - control.readyMs[p];
    };
    const ms = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} ms`;
    const fakeAdded50 = added('fake FIM provider', 'engine', 'p50');
    const fakeAdded95 = added('fake FIM provider', 'engine', 'p95');
    const embAdded50 = added('embedded model', 'engine', 'p50');
    const embAdded95 = added('embedded model', 'engine', 'p95');
    const debounce = find('fake FIM provider', 'completer').debounceMs!;
    return {
      tables: [
        {
          title: 'B8 keystroke → ghost text ready (ms), arms interleaved in random order',
          columns: ['provider', 'path', 'n', 'first p50', 'ready p50', 'ready p95', 'ready p99', 'max', 'added p50', 'added p95', 'ratio p50', 'gateway-reported p50', 'debounce p50', 'debounce p95', 'chars p50', 'empty answers'],
          rows: results.map((r) => {
            const control = find(r.scenario, 'direct').readyMs;
            const ready = r.kind === 'completer' ? r.engineMs! : r.readyMs;
            return [
              r.scenario,
              r.arm,
              r.readyMs.n,
              r.firstMs.p50,
              r.readyMs.p50,
              r.readyMs.p95,
              r.readyMs.p99,
              r.readyMs.max,
              ready.p50 - control.p50,
              ready.p95 - control.p95,
              ready.p50 / control.p50,
              r.gatewayMs?.p50 ?? null,
              r.debounceMs?.p50 ?? null,
              r.debounceMs?.p95 ?? null,
              r.chars.p50,
              r.empty,
            ];
          }),
          notes: [
            `direct = the bench process asks the provider itself with the same prompt (fake: the Qwen FIM prompt over keep-alive HTTP; embedded: EmbeddedProvider.infill in process); ready = end of its stream.`,
            'gateway engine = keystroke (Y.Text insert, sent) then client.complete at once; first = first complete.delta, ready = complete.result (what the Completer turns into ghost text).',
            'gateway + Completer = the real Completer with real timers: edited() → adaptive debounce → request → suggestion. Its ready columns include the debounce; its "added" columns exclude it (ready − debounce − direct).',
            '"added" = percentile of the gateway path − the same percentile of direct, same provider, same run (percentiles of differences are not differences of percentiles: read p95 as indicative).',
            `fake: first token ${firstTokenMs} ms after the request, then ${fakeChunks.length - 1} more chunks 1 ms apart ("${fakeSuggestion}"); single-line suggestion (cursor mid-line).`,
            `embedded: ${modelName}, single-line shape: up to ${defaultCompletionConfig.singleLineMaxTokens} tokens, stop "\\n"; gateway-reported = result.latencyMs (request → result inside the gateway).`,
          ],
        },
        {
          title: 'B8 gateway process CPU per completion (ms)',
          columns: ['provider', 'requests', 'gateway CPU ms per request'],
          rows: gatewayCpu.map((c) => [c.scenario, c.requests, c.cpuMsPerRequest]),
          notes: ['Δ process.cpuUsage() of the gateway process over the scenario ÷ requests (engine + Completer arms, warm-up included; also counts the keystroke and undo updates and the Completer\'s feedback). The embedded model host is its own process and is not included.'],
        },
      ],
      targets: [
        { name: 'added keystroke → ghost text p50, fake FIM provider', target: '≤ +5 ms', actual: ms(fakeAdded50), met: fakeAdded50 <= 5 },
        { name: 'added keystroke → ghost text p95, fake FIM provider', target: '≤ +5 ms', actual: ms(fakeAdded95), met: fakeAdded95 <= 5 },
        { name: 'added keystroke → ghost text p50, embedded model', target: '≤ +5 ms', actual: ms(embAdded50), met: embAdded50 <= 5 },
        { name: 'added keystroke → ghost text p95, embedded model', target: '≤ +5 ms', actual: ms(embAdded95), met: embAdded95 <= 5 },
        { name: 'Completer debounce at ~7 keys/s (policy, not overhead)', target: 'reported', actual: `p50 ${debounce.p50.toFixed(1)} ms, p95 ${debounce.p95.toFixed(1)} ms`, met: null },
      ],
      data: { iterations, warmup, firstTokenMs, keystrokeEveryMs, fakeChunks, model: modelName, results, gatewayCpu },
    };
  },
};

/** The context the gateway builds for the file after the keystroke (no open files). */
function contextAfterKeystroke(contextTokens: number): CompletionContext {
  const window = Math.max(256, contextTokens - defaultCompletionConfig.multiLineMaxTokens - 64);
  return buildCompletionContext({
    path: 'src/count.ts',
    text: head + '.' + tail,
    cursor: cursor + 1,
    openFiles: [],
    promptTokens: Math.min(defaultCompletionConfig.promptTokens, window),
    maxLines: defaultCompletionConfig.maxLines,
  });
}

function settingsOf(context: CompletionContext): { maxOutputTokens: number; stop: string[] } {
  const single = context.shape.singleLine;
  return { maxOutputTokens: single ? defaultCompletionConfig.singleLineMaxTokens : defaultCompletionConfig.multiLineMaxTokens, stop: single ? ['\n'] : ['\n\n'] };
}

/** The bench process POSTs the rendered Qwen FIM prompt to the fake itself, as the adapter would. */
function directFakeArm(baseUrl: string): Arm {
  const agent = new http.Agent({ keepAlive: true });
  const url = new URL(`${baseUrl}/completions`);
  const context = contextAfterKeystroke(128_000);
  const template = fimTemplate('qwen');
  const settings = settingsOf(context);
  const body = JSON.stringify({
    model: 'qwen2.5-coder-bench',
    prompt: template.render(context.prompt),
    stream: true,
    max_tokens: settings.maxOutputTokens,
    stream_options: { include_usage: true },
    temperature: 0,
    stop: [...template.stop, ...settings.stop],
  });
  return {
    name: 'direct to the fake FIM provider',
    kind: 'direct',
    samples: [],
    measure: () =>
      new Promise<Sample>((resolve, reject) => {
        const t0 = performance.now();
        let first = 0;
        let text = '';
        const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), accept: 'text/event-stream' } }, (res) => {
          res.setEncoding('utf8');
          let buffer = '';
          const done = () => {
            const at = performance.now();
            if (text !== fakeSuggestion) return reject(new Error(`direct fake answered ${JSON.stringify(text)}`));
            resolve({ firstMs: first - t0, readyMs: at - t0, chars: text.length });
          };
          res.on('data', (chunk: string) => {
            buffer += chunk;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const data = buffer.slice(6, end);
              buffer = buffer.slice(end + 2);
              if (data === '[DONE]') return done();
              const piece = (JSON.parse(data) as { choices?: Array<{ text?: string }> }).choices?.[0]?.text;
              if (piece) {
                if (!first) first = performance.now();
                text += piece;
              }
            }
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      }),
  };
}

/** EmbeddedProvider.infill in this process: same prefix, suffix, settings and a thread per file, as the gateway. */
function directEmbeddedArm(provider: EmbeddedProvider): Arm {
  const context = contextAfterKeystroke(2048);
  const settings = settingsOf(context);
  return {
    name: 'direct: EmbeddedProvider.infill in process',
    kind: 'direct',
    samples: [],
    measure: async () => {
      const t0 = performance.now();
      let first = 0;
      let text = '';
      const events = provider.infill(context.prompt.prefix, context.prompt.suffix, { ...settings, temperature: 0, threadId: 'bench:direct' }, new AbortController().signal);
      for await (const event of events) {
        if (event.type !== 'text') continue;
        if (!first) first = performance.now();
        text += event.text;
      }
      const at = performance.now();
      return { firstMs: (first || at) - t0, readyMs: at - t0, chars: text.length };
    },
  };
}

/** One client on `gateway` with the file open: the raw-engine arm and the Completer arm. */
async function gatewayArms(gateway: ChildHost, allowEmpty: boolean): Promise<{ engine: Arm; completer: Arm; close: () => void }> {
  const { workspaceId, token } = await gateway.call<{ workspaceId: string; token: string }>('createWorkspace', { name: 'B8', files: { 'src/count.ts': fileText } });
  const client: FlintClient = await connectFlintClient(gateway.url, workspaceId, token);
  const fileId = fileIdOf(client, 'src/count.ts');
  const handle = client.openDoc(fileId);
  await handle.whenSynced();
  const text: Y.Text = handle.doc.getText(FILE_TEXT_KEY);
  if (text.toString() !== fileText) throw new Error('the file did not sync');
  const undo = () => text.delete(cursor, 1);
  // A tiny model may answer nothing at a spot (its suggestion is empty): still a measured answer.
  const check = (status: string, suggestion: string, what: string) => {
    if (status !== 'done' || (!suggestion && !allowEmpty)) throw new Error(`${what}: completion ended ${status} with ${JSON.stringify(suggestion)}`);
  };

  const engine: Arm = {
    name: 'gateway: raw engine (complete.request → result)',
    kind: 'engine',
    samples: [],
    measure: async () => {
      const t0 = performance.now();
      text.insert(cursor, '.');
      const stream = client.complete({ fileId, index: cursor + 1, openFileIds: [] });
      let first = 0;
      stream.onDelta(() => (first ||= performance.now()));
      const result = await stream.result;
      const at = performance.now();
      undo();
      check(result.status, result.text, `engine arm (streamed ${JSON.stringify(stream.received)}, file now ${JSON.stringify(text.toString().slice(cursor - 20, cursor + 5))})`);
      return { firstMs: (first || at) - t0, readyMs: at - t0, gatewayMs: result.latencyMs ?? Number.NaN, chars: result.text.length };
    },
  };

  // Shared across keystrokes, so it learns the typing rhythm and latency as in the editor; a
  // fresh Completer (and cache) per keystroke, so the same spot is never answered from cache.
  const debounce = new AdaptiveDebounce();
  const completer: Arm = {
    name: 'gateway + Completer (debounce included in ready)',
    kind: 'completer',
    samples: [],
    measure: () =>
      new Promise<Sample>((resolve, reject) => {
        let requestedAt = 0;
        let first = 0;
        let t0 = 0;
        let settled = false;
        let chars = 0;
        const finish = (error: Error | null) => {
          if (settled) return;
          settled = true;
          const at = performance.now();
          instance.dispose();
          undo();
          if (error) reject(error);
          else resolve({ firstMs: (first || at) - t0, readyMs: at - t0, debounceMs: requestedAt - t0, chars });
        };
        const instance = new Completer({
          timers,
          debounce,
          onSuggestion: (suggestion) => {
            if (suggestion) finish(null);
          },
          source: {
            request: (state) => {
              requestedAt = performance.now();
              const stream = client.complete({ fileId: state.fileId, index: state.index, openFileIds: state.openFileIds });
              void stream.result.then((result) => {
                chars = result.text.length;
                if (result.status === 'done' && !result.text && allowEmpty) setTimeout(() => finish(null), 0);
                else if (result.status !== 'done' || !result.text) finish(new Error(`Completer arm: completion ended ${result.status} with ${JSON.stringify(result.text)}`));
              });
              const wrapped: CompletionStream = {
                requestId: stream.requestId,
                get received() {
                  return stream.received;
                },
                onDelta: (listener) =>
                  stream.onDelta((received) => {
                    first ||= performance.now();
                    listener(received);
                  }),
                result: stream.result,
                cancel: () => stream.cancel(),
              };
              return wrapped;
            },
            feedback: (requestId, outcome, latencyMs) => client.completionFeedback(requestId, outcome, latencyMs),
          },
        });
        t0 = performance.now();
        text.insert(cursor, '.');
        const all = text.toString();
        const state: EditorState = { fileId, index: cursor + 1, prefix: all.slice(Math.max(0, cursor + 1 - 200), cursor + 1), suffix: all.slice(cursor + 1, cursor + 201), openFileIds: [] };
        instance.edited(state);
      }),
  };
  return { engine, completer, close: () => client.destroy() };
}
