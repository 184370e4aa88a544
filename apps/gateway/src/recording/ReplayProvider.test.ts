/** A recorded answer replays at its recorded pace, divided by the speed; a stopped turn stops it. */
import { randomBytes } from 'node:crypto';
import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { secretBox } from '../models/connect/secretBox';
import type { ModelEvent } from '../core/ports/ModelProvider';
import { RECORDING_FORMAT, RECORDING_VERSION, type Recording } from './Recording';
import { ReplayProvider } from './ReplayProvider';

const recording: Recording = {
  format: RECORDING_FORMAT,
  version: RECORDING_VERSION,
  title: 't',
  prompt: 'p',
  label: 'l',
  frames: [
    { t: 100, ch: 'model', answer: 0, event: { type: 'text', text: 'a' } },
    { t: 300, ch: 'model', answer: 0, event: { type: 'text', text: 'b' } },
    { t: 1300, ch: 'model', answer: 0, event: { type: 'done', finishReason: 'stop' } },
    { t: 1400, ch: 'model', answer: 1, event: { type: 'text', text: 'second answer' } },
  ],
};

/** When (fake ms after the request) each event arrived. */
async function arrivals(speed: number, abortAtMs?: number): Promise<Array<[number, ModelEvent]>> {
  const clock = new FakeClock();
  const provider = new ReplayProvider(recording, clock, speed);
  const controller = new AbortController();
  const start = clock.now();
  const seen: Array<[number, ModelEvent]> = [];
  const run = (async () => {
    for await (const event of provider.stream({ model: 'm', messages: [], maxOutputTokens: 1 }, controller.signal)) seen.push([clock.now() - start, event]);
  })();
  for (let t = 0; t < 2_000; t += 10) {
    if (abortAtMs !== undefined && t >= abortAtMs) controller.abort();
    clock.advance(10);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
  await run;
  return seen;
}

describe('ReplayProvider', () => {
  it('plays an answer at the recorded gaps, 1×, 2× and 10×, from its first event', async () => {
    // Times from the first event (the fake clock moves in 10 ms steps: the first lands on the first step).
    const gaps = async (speed: number) => {
      const seen = await arrivals(speed);
      return seen.map(([t]) => t - seen[0]![0]);
    };
    expect(await gaps(1)).toEqual([0, 200, 1200]);
    expect(await gaps(2)).toEqual([0, 100, 600]);
    expect(await gaps(10)).toEqual([0, 20, 120]);
  });

  it('gives the next request the next answer, and ends one it has no answer for', async () => {
    const clock = new FakeClock();
    const provider = new ReplayProvider(recording, clock, 1);
    const signal = new AbortController().signal;
    const texts = async () => {
      const out: ModelEvent[] = [];
      const run = (async () => {
        for await (const e of provider.stream({ model: 'm', messages: [], maxOutputTokens: 1 }, signal)) out.push(e);
      })();
      for (let i = 0; i < 300; i++) {
        clock.advance(10);
        await Promise.resolve();
        await Promise.resolve();
      }
      await run;
      return out;
    };
    expect((await texts()).map((e) => e.type)).toEqual(['text', 'text', 'done']);
    expect(await texts()).toEqual([{ type: 'text', text: 'second answer' }]);
    expect(await texts()).toEqual([{ type: 'done', finishReason: 'stop' }]);
  });

  it('stops when the turn is stopped', async () => {
    expect((await arrivals(1, 250)).map(([, e]) => e)).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
  });
});

describe('secretBox', () => {
  it('opens what it sealed, and nothing sealed under another key or altered', () => {
    const box = secretBox(randomBytes(32));
    const sealed = box.seal('sk-secret-value');
    expect(sealed).not.toContain('sk-secret');
    expect(box.open(sealed)).toBe('sk-secret-value');
    expect(box.seal('sk-secret-value')).not.toBe(sealed); // a fresh IV each time
    expect(secretBox(randomBytes(32)).open(sealed)).toBeNull();
    const [v, iv, tag, body] = sealed.split('.');
    const flipped = Buffer.from(body!, 'base64');
    flipped[0]! ^= 1;
    expect(box.open([v, iv, tag, flipped.toString('base64')].join('.'))).toBeNull();
    expect(box.open('garbage')).toBeNull();
    expect(() => secretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});
