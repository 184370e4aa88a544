import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gguf, makeBrokenGguf, makeTinyLlamaGguf, type BrokenGgufKind } from '@flint/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, type ModelEvent, type ModelRequest } from '../../core/ports/ModelProvider';
import { collectEvents, describeProviderContract, expectWellOrdered } from '../../../test/providerContract';
import { EmbeddedModelError } from './EmbeddedModelError';
import { EmbeddedProvider } from './EmbeddedProvider';
import { ModelHostProcess } from './ModelHostProcess';

/**
 * The embedded provider against a tiny random-weight llama the test writes: real node-llama-cpp,
 * real child processes. Random weights generate gibberish; the tiny model gives special tokens
 * and non-ASCII bytes zero logits, so a greedy generation is text up to exactly maxOutputTokens.
 */
const dir = mkdtempSync(join(tmpdir(), 'flint-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function modelFile(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const tinyModel = modelFile('tiny.gguf', makeTinyLlamaGguf());
const newProvider = (modelPath = tinyModel) => new EmbeddedProvider({ modelPath, contextSize: 256, warmThreads: 2 });

function ask(content: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'tiny', messages: [{ role: 'user', content }], maxOutputTokens: 16, ...extra };
}

/** Long enough to still be running whenever the test acts: the context shifts instead of ending. */
const endless = 100_000;

const usageOf = (events: ModelEvent[]) => events.find((e) => e.type === 'usage') as Extract<ModelEvent, { type: 'usage' }>;

async function failureOf(stream: AsyncIterable<ModelEvent>): Promise<ProviderError> {
  try {
    for await (const _event of stream);
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error('the stream ended without an error');
}

describe('EmbeddedProvider on a tiny GGUF', () => {
  let provider: EmbeddedProvider;
  beforeAll(() => {
    provider = newProvider();
  });
  afterAll(() => provider.close());

  it('streams text, then usage, then done, from a child process', async () => {
    const { events, text, error } = await collectEvents(provider, ask('function add(a, b) {'));
    expect(error).toBeNull();
    expectWellOrdered(events);
    expect(text.length).toBeGreaterThan(0);
    const usage = usageOf(events);
    expect(usage.cachedInputTokens).toBe(0);
    expect(usage.inputTokens).toBeGreaterThan(5);
    expect(usage.outputTokens).toBe(16);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'length' });
    expect(provider.hostPid).not.toBe(process.pid);
  });

  it("reuses a thread's KV cache for its follow-up, while another thread runs in between", async () => {
    const first = await collectEvents(provider, ask('const answer =', { threadId: 't1' }));
    await collectEvents(provider, ask('something else entirely', { threadId: 't2' }));
    const followUpMessages: ModelRequest['messages'] = [
      { role: 'user', content: 'const answer =' },
      { role: 'assistant', content: first.text },
      { role: 'user', content: 'and now?' },
    ];
    const followUp = await collectEvents(provider, ask('', { threadId: 't1', messages: followUpMessages }));
    expect(followUp.error).toBeNull();
    expect(usageOf(followUp.events).cachedInputTokens).toBeGreaterThanOrEqual(usageOf(first.events).inputTokens);

    // The same prompt in a new thread takes the least recently used sequence (t2's) and recomputes.
    const cold = await collectEvents(provider, ask('', { threadId: 't3', messages: followUpMessages }));
    expect(usageOf(cold.events).cachedInputTokens).toBeLessThan(usageOf(first.events).inputTokens);
  });

  it('fills in the middle between a prefix and a suffix', async () => {
    const events: ModelEvent[] = [];
    for await (const event of provider.infill('function square(x) {\n  return ', ';\n}\n', { maxOutputTokens: 8 }, new AbortController().signal)) {
      events.push(event);
    }
    expectWellOrdered(events);
    expect(events.some((e) => e.type === 'text' && e.text.length > 0)).toBe(true);
    expect(usageOf(events).outputTokens).toBe(8);
  });

  it('stops the generation in the host on abort, so the same thread is served next', async () => {
    const controller = new AbortController();
    const seen: ModelEvent[] = [];
    for await (const event of provider.stream(ask('loop forever', { threadId: 'busy', maxOutputTokens: endless }), controller.signal)) {
      seen.push(event);
      controller.abort();
    }
    expect(seen).toHaveLength(1);
    // Same thread, same sequence: this waits behind the endless generation unless the host stopped it.
    const next = await collectEvents(provider, ask('hello again', { threadId: 'busy' }));
    expect(next.error).toBeNull();
    expectWellOrdered(next.events);
  });

  it('refuses a prompt longer than the context window with context_length', async () => {
    const error = await failureOf(provider.stream(ask('x '.repeat(400)), new AbortController().signal));
    expect(error.code).toBe('context_length');
  });

  it('turns a host killed mid-stream into a network error, and starts a new host for the next request', async () => {
    const killedPid = provider.hostPid!;
    const error = await failureOf(
      (async function* () {
        for await (const event of provider.stream(ask('keep going', { maxOutputTokens: endless }), new AbortController().signal)) {
          if (event.type === 'text' && provider.hostPid === killedPid) process.kill(killedPid, 'SIGKILL');
          yield event;
        }
      })(),
    );
    expect(error.code).toBe('network');
    expect(error.cause).toMatchObject({ code: 'host_crashed' });
    expect(error.message).toContain('SIGKILL');

    const next = await collectEvents(provider, ask('are you back?'));
    expect(next.error).toBeNull();
    expect(next.text.length).toBeGreaterThan(0);
    expect(provider.hostPid).not.toBe(killedPid);
  });
});

describe('EmbeddedProvider given a bad model file', () => {
  const broken: Array<[BrokenGgufKind, string]> = [
    ['missing_feed_forward_length', 'missing_metadata'],
    ['truncated', 'truncated'],
    ['not_gguf', 'not_gguf'],
  ];
  for (const [kind, code] of broken) {
    it(`refuses a ${kind} file as not_configured without starting a host`, async () => {
      const provider = newProvider(modelFile(`${kind}.gguf`, makeBrokenGguf(kind)));
      const error = await failureOf(provider.stream(ask('hi'), new AbortController().signal));
      expect(error.code).toBe('not_configured');
      expect(error.cause).toBeInstanceOf(EmbeddedModelError);
      expect(error.cause).toMatchObject({ code });
      expect(provider.hostPid).toBeNull();
      await provider.close();
    });
  }

  it('refuses a missing file as not_configured', async () => {
    const provider = newProvider(join(dir, 'missing.gguf'));
    const error = await failureOf(provider.stream(ask('hi'), new AbortController().signal));
    expect(error).toMatchObject({ code: 'not_configured', cause: { code: 'not_found' } });
  });

  it("reports llama.cpp's reason when it refuses a file that passed validation, and fails fast after", async () => {
    // feed_forward_length disagrees with the tensors: only llama.cpp's shape check finds it.
    const mismatch = modelFile('ff-mismatch.gguf', makeTinyLlamaGguf({ overrideMetadata: { 'llama.feed_forward_length': gguf.u32(65) } }));
    const provider = newProvider(mismatch);
    const error = await failureOf(provider.stream(ask('hi'), new AbortController().signal));
    expect(error).toMatchObject({ code: 'not_configured', cause: { code: 'load_failed' } });
    expect(error.message).toContain('wrong shape');
    // Remembered until the file changes: no host per request.
    const again = await failureOf(provider.stream(ask('hi'), new AbortController().signal));
    expect(again.cause).toBe(error.cause);
    expect(provider.hostPid).toBeNull();
    await provider.close();
  });

  it('survives llama.cpp aborting on a file that skipped validation: only the host dies', async () => {
    const aborting = modelFile('aborts.gguf', makeBrokenGguf('missing_feed_forward_length'));
    const error = await ModelHostProcess.start({ modelPath: aborting, contextSize: 256, warmThreads: 1, cpuThreads: 1 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbeddedModelError);
    expect(error).toMatchObject({ code: 'host_crashed' });
    expect((error as Error).message).toMatch(/SIGABRT.*GGML_ASSERT/);
  });
});

describeProviderContract('embedded (tiny GGUF)', async () => {
  const provider = newProvider();
  const request = ask('export function', { maxOutputTokens: 12 });
  // Greedy decoding is deterministic: the first run is what every later run must stream.
  const { text, error } = await collectEvents(provider, request);
  if (error) throw error;
  return { provider, request, expectedText: text, teardown: () => provider.close() };
});
