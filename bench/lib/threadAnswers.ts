/**
 * B11's model answers for the agent thread, as explicit tokens for PacedTokenServer
 * (bench/lib/pacedAnswer.ts): an apply_patch call that adds marked lines to two files, the
 * short text that answers the tool's result, and a few KB of ordinary Markdown.
 */
import { markerComment } from '../browser/src/markers';
import type { PacedAnswer } from './pacedAnswer';

/** Prose cut like the bench's code: ~4 characters a token, as a BPE token of English or code. */
export function proseTokens(text: string): string[] {
  return Array.from(text.matchAll(/[\s\S]{1,4}/g), (m) => m[0]);
}

/** One file's hunk: its context (old lines, kept or removed) and how many marked tokens it adds after them. */
export interface HunkPlan {
  path: string;
  /** The file's lines the hunk starts with, kept. */
  context: string[];
  /** Lines the added text replaces (B10's rewrite); none: the hunk only adds lines. */
  removed: string[];
  /** Marked tokens the hunk adds, eight to a line (a multiple of 8). */
  tokens: number;
  /** A kept line after the added ones, as models close a hunk. */
  after: string;
}

/**
 * An answer that says one sentence and calls `apply_patch` with one hunk per file. Its added
 * lines are B10's marked lines (`// @000000 @000001 … @000007`: every token its own marker,
 * numbered across the files in order), so a page can tell when each token reached its screen;
 * the patch's other text (its `*** …` lines, context, the JSON around it) streams as ~4-character
 * tokens. The arguments' JSON escapes are inside the tokens, as a model writes them.
 */
export function patchAnswer(hunks: HunkPlan[]): PacedAnswer {
  const text = proseTokens('I will add the lines to both files.\n');
  const args: string[] = [];
  const markers: Array<[number, number]> = [];
  const escaped = (raw: string) => JSON.stringify(raw).slice(1, -1);
  const plain = (raw: string) => args.push(...proseTokens(raw));
  plain(`{"patch":"${escaped('*** Begin Patch\n')}`);
  let marker = 0;
  for (const hunk of hunks) {
    const old = [...hunk.context.map((line) => ` ${line}\n`), ...hunk.removed.map((line) => `-${line}\n`)].join('');
    plain(escaped(`*** Update File: ${hunk.path}\n@@\n${old}`));
    for (let i = 0; i < hunk.tokens; i++) {
      const column = i % 8;
      const piece = `${column === 0 ? `+${markerComment(marker)}` : ` @${String(marker).padStart(6, '0')}`}${column === 7 ? '\n' : ''}`;
      markers.push([text.length + args.length, marker++]);
      args.push(escaped(piece));
    }
    plain(escaped(` ${hunk.after}\n`));
  }
  plain(`${escaped('*** End Patch\n')}"}`);
  return { text, call: { name: 'apply_patch', arguments: args }, markers };
}

/** The model's answer once the tool told it what the patch did. */
export function followUpAnswer(paths: string[]): PacedAnswer {
  return { text: proseTokens(`Added the lines to ${paths.map((p) => `\`${p}\``).join(' and ')}; nothing else changed.`) };
}

/** The last words of `markdownAnswerText`, as the panel shows them (a page waits for these). */
export const markdownAnswerEnd = 'Say the word and I will write those tests next.';

/**
 * What an agent explains in the thread: paragraphs, a list, inline code, two fenced TypeScript
 * blocks (Monaco colours a block once its fence closes), ~6.5 KB.
 */
export const markdownAnswerText = `Here is what I found in \`src/limits.ts\`, and what I would change.

## What happens today

\`RateLimiter.take()\` refills the bucket from \`Date.now()\` on every call, then subtracts one token. Two things make it misbehave under load:

- the refill uses the wall clock, so a clock step (NTP, a laptop waking up) can refill the whole bucket at once, or freeze it for minutes;
- \`take()\` never looks at \`retryAfterMs\`, so a caller that was refused retries at once and is refused again, burning a request each time;
- the bucket is keyed by \`session.id\`, which changes on every reconnect: a client that reconnects in a loop gets a fresh bucket every time;
- the tests use \`vi.useFakeTimers()\` but the limiter reads \`Date.now()\` through a module-level import, so half of them never advance the clock they think they do.

The first and third are the ones users would notice. A reconnect loop is exactly what a flaky mobile connection produces, and today it turns the limiter off for that client.

## The change

I would give the limiter a \`Clock\` (the same interface the gateway core already takes), key it by \`linkId\` instead of the session, and return the wait instead of a boolean, so callers can tell the user how long to wait:

\`\`\`ts
import type { Clock } from './Clock';

export interface TakeResult {
  ok: boolean;
  /** How long until one token is back; 0 when \`ok\`. */
  retryAfterMs: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedAt: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly perSecond: number,
    private readonly burst: number,
  ) {}

  take(key: string): TakeResult {
    const now = this.clock.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updatedAt: now };
    // A monotonic clock never goes back; a step forward refills at most \`burst\`.
    const elapsedMs = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(this.burst, bucket.tokens + (elapsedMs * this.perSecond) / 1000);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true, retryAfterMs: 0 };
    }
    return { ok: false, retryAfterMs: Math.ceil(((1 - bucket.tokens) * 1000) / this.perSecond) };
  }
}
\`\`\`

The gateway passes \`systemClock\`, whose \`now()\` is \`performance.timeOrigin + performance.now()\`: monotonic within a process, so a wall-clock step no longer refills anything. Tests pass a \`FakeClock\` and advance it explicitly, which also fixes the fourth point without touching \`vi.useFakeTimers()\` at all.

## Callers

Three places call \`take()\` today, and each needs a small change:

1. \`Session.onPrompt\` refuses with \`rate_limited\`; it should now send \`retryAfterMs\` along, so the client can show "wait 2 s" instead of a bare refusal.
2. \`CompletionService.request\` drops the completion silently; it can keep doing that, since a ghost text that never comes is the right outcome there.
3. \`ThreadService.handle\` already has a \`TokenBucket\` of its own; I would leave it alone in this change and fold the two together later, once this one has shipped.

Keying by \`linkId\` means two tabs of the same person share one bucket. That is what we want for prompts (one person, one budget), and it matches how the daily token budget is already counted in \`UsageLedger\`.

## Tests

The existing tests mostly keep working once they take a \`FakeClock\`. I would add these:

\`\`\`ts
it('refills at most burst after a clock step forward', () => {
  const clock = new FakeClock();
  const limiter = new RateLimiter(clock, 1, 3);
  for (let i = 0; i < 3; i++) expect(limiter.take('a').ok).toBe(true);
  clock.advance(3_600_000);
  const taken = Array.from({ length: 5 }, () => limiter.take('a').ok);
  expect(taken).toEqual([true, true, true, false, false]);
});

it('tells a refused caller how long to wait', () => {
  const clock = new FakeClock();
  const limiter = new RateLimiter(clock, 2, 1);
  expect(limiter.take('a')).toEqual({ ok: true, retryAfterMs: 0 });
  expect(limiter.take('a')).toEqual({ ok: false, retryAfterMs: 500 });
});
\`\`\`

A property test would also be cheap here: for any sequence of \`take\` calls and clock advances, the number of successful takes in any window of \`w\` ms is at most \`burst + w * perSecond / 1000\`. The test-kit's \`seededRandom\` gives the sequence, and a failure prints its seed.

## Risks

- **Memory.** The map grows by one entry per link that ever prompted. Links are few per workspace, but a sweep of buckets that are full again (untouched for \`burst / perSecond\` seconds) keeps it bounded; I would add it in the same change.
- **Behaviour change.** A client that reconnected in a loop used to get unlimited prompts; now it gets the normal rate. Nobody should rely on that, but the e2e suite reconnects on purpose in \`collaboration.spec.ts\`, so I will run it before pushing.
- **Config.** \`promptsPerMinute\` keeps its meaning; \`burst\` stays \`min(10, promptsPerMinute)\` as today.

## Rollout

I would ship it in two commits, so each can be reverted alone:

1. The \`Clock\` and the \`TakeResult\`, with every caller adapted and the new tests. Behaviour is the same except that a wall-clock step no longer refills the bucket.
2. The key change from \`session.id\` to \`linkId\`, with the sweep. This is the one that changes what a reconnecting client sees, so it goes second and gets its own line in the changelog.

For the client side, the refusal already carries a \`code\`; the input only has to read \`retryAfterMs\` when it is there:

\`\`\`ts
function describeRefusal(result: RequestResult): string {
  if (result.ok) return '';
  if (result.code === 'rate_limited' && result.retryAfterMs !== undefined) {
    const seconds = Math.max(1, Math.round(result.retryAfterMs / 1000));
    return \`Too many messages in a row; try again in \${seconds} s.\`;
  }
  return result.message;
}
\`\`\`

The sentence follows the style guide: it says what happened and what to do. The existing \`describeThreadFailure\` in \`agentMessages.ts\` can call it, so the panel and the Ctrl-K box say the same thing.

Nothing here touches the protocol, so old clients keep working: they ignore the new \`retryAfterMs\` field. Say the word and I will write those tests next.
`;

export function markdownAnswer(): PacedAnswer {
  return { text: proseTokens(markdownAnswerText) };
}

/** A file of B10's shape (a header naming it, an import, a blank line, a 10-line function), ~330 bytes. */
export function threadFileText(label: string): string {
  const body = Array.from({ length: 6 }, (_, i) => `  sum += items[${i}] * ${i + 1};`);
  const region = ['export function total(items: number[]): number {', '  let sum = 0;', ...body, '  return weigh(sum);', '}'];
  return [`// ${label}`, 'import { weigh } from "./weigh";', '', ...region, '', 'export const unit = 1;', ''].join('\n');
}

/** The function `threadFileText` holds (its lines 4–13): what a rewrite replaces. */
export function threadFileFunction(text: string): string[] {
  return text.split('\n').slice(3, 13);
}
