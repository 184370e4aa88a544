/**
 * The behaviours every ModelProvider adapter must have (STYLE: one contract suite per interface,
 * run against every implementation). Adapter test files call `describeProviderContract` with a
 * setup that starts whatever the adapter talks to (a fake server on loopback, a tiny GGUF).
 *
 * One fixture serves the whole suite (set up once, torn down after the last test) because some
 * setups are expensive (loading a model); tests therefore run in declaration order and the
 * `close()` test comes last.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelEvent, ModelProvider, ModelRequest, ToolCall } from '../src/core/ports/ModelProvider';

export interface ProviderContractFixture {
  provider: ModelProvider;
  /** What the provider streams for `request`, exactly (deterministic: a fake, or temperature 0). */
  expectedText: string;
  /** Must produce more than one `text` event, so there is a "mid-stream" to abort in. */
  request: ModelRequest;
  teardown(): Promise<void>;
}

/** Drains a stream; the collected events and the error it threw, if any. */
export async function collectEvents(
  provider: ModelProvider,
  request: ModelRequest,
  signal: AbortSignal = new AbortController().signal,
): Promise<{ events: ModelEvent[]; text: string; error: unknown }> {
  const events: ModelEvent[] = [];
  let text = '';
  let error: unknown = null;
  try {
    for await (const event of provider.stream(request, signal)) {
      events.push(event);
      if (event.type === 'text') text += event.text;
    }
  } catch (caught) {
    error = caught;
  }
  return { events, text, error };
}

const shapeLetter: Record<ModelEvent['type'], string> = { text: 't', 'tool-call': 'c', 'tool-call-delta': 'a', usage: 'u', done: 'd' };

/** Throws unless events are text and tool calls, then at most one usage, then exactly one done, last. */
export function expectWellOrdered(events: ModelEvent[]): void {
  const shape = events.map((e) => shapeLetter[e.type]).join('');
  expect(shape).toMatch(/^[tca]*u?d$/);
  toolCallsOf(events);
  const done = events.at(-1);
  if (done?.type === 'done') expect(['stop', 'length', 'tool_calls']).toContain(done.finishReason);
}

/**
 * The calls a stream made, each with its deltas put together. Throws unless calls are numbered
 * from 0 in order and each delta (never empty) belongs to the call begun last.
 */
export function toolCallsOf(events: ModelEvent[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const event of events) {
    if (event.type === 'tool-call') {
      expect(event.index).toBe(calls.length);
      calls.push({ id: event.id, name: event.name, arguments: '' });
    } else if (event.type === 'tool-call-delta') {
      expect(event.index).toBe(calls.length - 1);
      expect(event.arguments).not.toBe('');
      calls[event.index]!.arguments += event.arguments;
    }
  }
  return calls;
}

/** Registers the contract suite for one adapter. */
export function describeProviderContract(name: string, setup: () => Promise<ProviderContractFixture>): void {
  describe(`ModelProvider contract: ${name}`, () => {
    let fixture: ProviderContractFixture;

    beforeAll(async () => {
      fixture = await setup();
    });

    afterAll(async () => {
      await fixture?.teardown();
    });

    it('streams text whose concatenation is the expected text', async () => {
      const { text, error } = await collectEvents(fixture.provider, fixture.request);
      expect(error).toBeNull();
      expect(text).toBe(fixture.expectedText);
    });

    it('emits text events, at most one usage, then exactly one done, last', async () => {
      const { events, error } = await collectEvents(fixture.provider, fixture.request);
      expect(error).toBeNull();
      expectWellOrdered(events);
      for (const event of events) {
        if (event.type === 'text') expect(event.text.length).toBeGreaterThan(0);
        if (event.type === 'usage') {
          expect(event.outputTokens).toBeGreaterThan(0);
          expect(event.cachedInputTokens).toBeLessThanOrEqual(event.inputTokens);
        }
      }
    });

    it('ends without throwing and yields nothing more once the signal aborts mid-stream', async () => {
      const controller = new AbortController();
      const seen: ModelEvent[] = [];
      let afterAbort = 0;
      for await (const event of fixture.provider.stream(fixture.request, controller.signal)) {
        if (controller.signal.aborted) afterAbort++;
        seen.push(event);
        if (event.type === 'text') controller.abort();
      }
      expect(seen.length).toBe(1);
      expect(afterAbort).toBe(0);
    });

    it('yields nothing for a signal that is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const { events, error } = await collectEvents(fixture.provider, fixture.request, controller.signal);
      expect(error).toBeNull();
      expect(events).toEqual([]);
    });

    it('serves a full request after an aborted one', async () => {
      const controller = new AbortController();
      for await (const event of fixture.provider.stream(fixture.request, controller.signal)) {
        if (event.type === 'text') controller.abort();
      }
      const { events, text, error } = await collectEvents(fixture.provider, fixture.request);
      expect(error).toBeNull();
      expect(text).toBe(fixture.expectedText);
      expectWellOrdered(events);
    });

    it('serves a full request after a consumer stopped reading early', async () => {
      for await (const event of fixture.provider.stream(fixture.request, new AbortController().signal)) {
        if (event.type === 'text') break;
      }
      const { text, error } = await collectEvents(fixture.provider, fixture.request);
      expect(error).toBeNull();
      expect(text).toBe(fixture.expectedText);
    });

    it('can be closed more than once', async () => {
      await fixture.provider.close();
      await expect(fixture.provider.close()).resolves.toBeUndefined();
    });
  });
}
