import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../storage/SqliteStore';
import { fileIdOf, Harness, textOf } from '../../../test/testHarness';
import type { ModelRouter } from './ModelRouter';
import { drain, ScriptedProvider } from '../../../test/ScriptedProvider';

/** Human keystrokes use private-use characters, so each one can be found (or missed) exactly. */
const humanChar = (n: number) => String.fromCharCode(0xe000 + n);
const stripHumans = (s: string) => s.replace(/[\ue000-\uf8ff]/g, '');

const words = ['const', 'let', 'value', 'return', 'if', '(', ')', '{', '}', ';', ' ', '\n', '  ', 'x', 'y', '=', '+', '1', '42', 'foo', 'bar'];

/** Code of `min`–`max` characters (or a word more): its words, in turn, until it is that long. */
const code = (min: number, max: number) =>
  fc.tuple(fc.integer({ min, max }), fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 16, size: 'max' })).map(([length, list]) => {
    let out = '';
    for (let i = 0; out.length < length; i++) out += list[i % list.length];
    return out;
  });

/** What the model does with each line of the region, line by line; lines past the list are kept. */
const lineRewrite = fc.oneof(
  { arbitrary: fc.constant({ type: 'keep' as const }), weight: 55 },
  { arbitrary: fc.constant({ type: 'drop' as const }), weight: 15 },
  { arbitrary: fc.record({ type: fc.constant('replace' as const), line: code(5, 24) }), weight: 15 },
  { arbitrary: fc.record({ type: fc.constant('add after' as const), line: code(3, 17) }), weight: 15 },
);
type LineRewrite = typeof lineRewrite extends fc.Arbitrary<infer T> ? T : never;

function rewriteOf(region: string, plan: readonly LineRewrite[]): string {
  return region
    .split('\n')
    .flatMap((line, i) => {
      const change = plan[i] ?? { type: 'keep' };
      if (change.type === 'keep') return [line];
      if (change.type === 'drop') return [];
      if (change.type === 'replace') return [change.line];
      return [line, change.line];
    })
    .join('\n');
}

/** `true` with probability `p`; shrinks to `false`. */
const chance = (p: number) => fc.oneof({ arbitrary: fc.constant(false), weight: Math.round((1 - p) * 100) }, { arbitrary: fc.constant(true), weight: Math.round(p * 100) });

/**
 * One moment of the stream: the model sends a few characters, or a person types near or inside
 * the region in their own (possibly stale) replica, or neither; then the gateway may run.
 */
const moment = fc.record({
  event: fc.oneof(
    { arbitrary: fc.record({ type: fc.constant('model sends' as const), size: fc.integer({ min: 1, max: 12 }) }), weight: 40 },
    { arbitrary: fc.record({ type: fc.constant('person types' as const), who: fc.constantFrom(1, 2), near: fc.nat({ max: 209 }) }), weight: 35 },
    { arbitrary: fc.constant({ type: 'nothing' as const }), weight: 25 },
  ),
  drain: chance(0.5),
  advance: chance(0.5),
  flush: chance(0.6),
});

const scenario = fc.record({
  lines: fc.array(code(10, 39), { minLength: 6, maxLength: 15, size: 'max' }),
  // Where the rewritten region starts (modulo the content) and how long it is.
  start: fc.nat({ max: 999 }),
  length: fc.integer({ min: 1, max: 200 }),
  plan: fc.array(lineRewrite, { maxLength: 40, size: 'max' }),
  // When the moments run out, whatever the model has not sent yet arrives at once.
  moments: fc.array(moment, { maxLength: 200, size: 'max' }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

async function runOnce({ lines, start: startAt, length, plan, moments }: Scenario): Promise<void> {
  const provider = new ScriptedProvider();
  const models: ModelRouter = () => ({ provider, model: 'm', contextTokens: 128_000, supportsPrediction: false });
  const content = lines.join('\n') + '\n';
  const h = new Harness(new SqliteStore(':memory:'), {}, models);
  const ws = h.gateway.createWorkspace('P', { 'f.ts': content });
  const clients = [0, 1, 2].map(() => h.client(ws.workspaceId, ws.owner.token));
  h.flush();
  const fileId = fileIdOf(clients[0]!, 'f.ts');
  const texts = clients.map((c) => textOf(c, fileId));
  h.flush();

  const start = startAt % content.length;
  const end = Math.min(content.length, start + length);
  const region = content.slice(start, end);
  const rewrite = rewriteOf(region, plan);
  const result = clients[0]!.prompt({ fileId, anchor: start, head: end, instruction: 'rewrite' });
  h.flush();
  await drain(); // the answer is sent once the prompt is admitted
  h.flush();
  const answer = await result;
  if (!answer.ok || !answer.turnId) throw new Error(`refused ${JSON.stringify(answer)}`);

  let typed = 0;
  let sent = 0;
  for (const { event, ...then } of moments) {
    if (sent >= rewrite.length) break;
    if (event.type === 'model sends') {
      provider.emit(rewrite.slice(sent, sent + event.size));
      sent += event.size;
    } else if (event.type === 'person types') {
      const who = texts[event.who]!;
      const near = Math.max(0, Math.min(who.length, start - 5 + (event.near % (end - start + 10))));
      who.insert(near, humanChar(typed++));
    }
    if (then.drain) await drain();
    if (then.advance) h.clock.advance(8);
    if (then.flush) h.flush();
  }
  if (sent < rewrite.length) provider.emit(rewrite.slice(sent));
  provider.end();
  await drain();
  h.clock.advance(8);
  h.flush();

  const final = texts[0]!.toString();
  for (const text of texts) expect(text.toString()).toBe(final);
  for (let i = 0; i < typed; i++) expect(final.split(humanChar(i)), `human char ${i}`).toHaveLength(2);
  const wanted = content.slice(0, start) + rewrite + content.slice(end);
  if (stripHumans(final) !== wanted) {
    throw new Error(`after streaming:\n got  ${JSON.stringify(stripHumans(final))}\n want ${JSON.stringify(wanted)}\n region ${JSON.stringify(region)}\n rewrite ${JSON.stringify(rewrite)}\n raw ${JSON.stringify(final)}`);
  }

  clients[1]!.review(fileId, { turnId: answer.turnId }, 'reject');
  h.flush();
  const rejected = texts[2]!.toString();
  for (const text of texts) expect(text.toString()).toBe(rejected);
  for (let i = 0; i < typed; i++) expect(rejected.split(humanChar(i))).toHaveLength(2);
  if (stripHumans(rejected) !== content) {
    throw new Error(`after reject:\n got  ${JSON.stringify(stripHumans(rejected))}\n want ${JSON.stringify(content)}\n raw ${JSON.stringify(rejected)}`);
  }
  for (const c of clients) c.destroy();
}

describe('agent streaming while people type', () => {
  it('replicas converge, human characters survive, reject restores the original', async () => {
    await fc.assert(fc.asyncProperty(scenario, runOnce), propertyParameters(30));
  });
});
