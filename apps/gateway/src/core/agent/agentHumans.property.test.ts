import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../storage/SqliteStore';
import { fileIdOf, Harness, textOf } from '../testHarness';
import type { ModelRouter } from './ModelRouter';
import { drain, ScriptedProvider } from './ScriptedProvider';

const { seed, iterations } = propertyConfig(30);

/** Human keystrokes use private-use characters, so each one can be found (or missed) exactly. */
const humanChar = (n: number) => String.fromCharCode(0xe000 + n);
const stripHumans = (s: string) => s.replace(/[\ue000-\uf8ff]/g, '');

const words = ['const', 'let', 'value', 'return', 'if', '(', ')', '{', '}', ';', ' ', '\n', '  ', 'x', 'y', '=', '+', '1', '42', 'foo', 'bar'];

function randomCode(random: () => number, length: number): string {
  let out = '';
  while (out.length < length) out += words[Math.floor(random() * words.length)];
  return out;
}

/** Rewrites `region` at random: keeps most lines, edits some, adds and drops a few. */
function randomRewrite(random: () => number, region: string): string {
  return region
    .split('\n')
    .flatMap((line) => {
      const roll = random();
      if (roll < 0.55) return [line];
      if (roll < 0.7) return [];
      if (roll < 0.85) return [randomCode(random, 5 + Math.floor(random() * 20))];
      return [line, randomCode(random, 3 + Math.floor(random() * 15))];
    })
    .join('\n');
}

async function runOnce(runSeed: number): Promise<void> {
  const random = seededRandom(runSeed);
  const pick = (n: number) => Math.floor(random() * n);
  const provider = new ScriptedProvider();
  const models: ModelRouter = () => ({ provider, model: 'm', contextTokens: 128_000, supportsPrediction: false });
  const lines = Array.from({ length: 6 + pick(10) }, () => randomCode(random, 10 + pick(30)));
  const content = lines.join('\n') + '\n';
  const h = new Harness(new SqliteStore(':memory:'), {}, models);
  const ws = h.gateway.createWorkspace('P', { 'f.ts': content });
  const clients = [0, 1, 2].map(() => h.client(ws.workspaceId, ws.owner.token));
  h.flush();
  const fileId = fileIdOf(clients[0]!, 'f.ts');
  const texts = clients.map((c) => textOf(c, fileId));
  h.flush();

  const start = pick(content.length);
  const end = Math.min(content.length, start + 1 + pick(200));
  const region = content.slice(start, end);
  const rewrite = randomRewrite(random, region);
  const result = clients[0]!.prompt({ fileId, anchor: start, head: end, instruction: 'rewrite' });
  h.flush();
  const answer = await result;
  if (!answer.ok || !answer.turnId) throw new Error(`refused ${JSON.stringify(answer)}`);

  let typed = 0;
  let sent = 0;
  while (sent < rewrite.length) {
    const roll = random();
    if (roll < 0.4) {
      const size = 1 + pick(12);
      provider.emit(rewrite.slice(sent, sent + size));
      sent += size;
    } else if (roll < 0.75) {
      // A person types near or inside the region, in their own (possibly stale) replica.
      const who = texts[1 + pick(2)]!;
      const near = Math.max(0, Math.min(who.length, start - 5 + pick(end - start + 10)));
      who.insert(near, humanChar(typed++));
    }
    if (random() < 0.5) await drain();
    if (random() < 0.5) h.clock.advance(8);
    if (random() < 0.6) h.flush();
  }
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

describe('agent streaming while people type (seeded)', () => {
  it(`replicas converge, human characters survive, reject restores the original (SEED=${seed} ITERATIONS=${iterations})`, async () => {
    for (let i = 0; i < iterations; i++) {
      try {
        await runOnce(seed + i);
      } catch (error) {
        throw new Error(`failed: replay with SEED=${seed + i} ITERATIONS=1\n${String(error)}`);
      }
    }
  });
});
