import type { CompletionOutcome } from '@flint/protocol';
import { FakeClock } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import { AdaptiveDebounce } from './AdaptiveDebounce';
import { CompletionCache } from './CompletionCache';
import type { CompletionResult, CompletionStream } from './CompletionChannel';
import { Completer, nextWord, typedSince, type CompletionSource, type EditorState, type Suggestion } from './Completer';

/** A completion the test answers by hand. */
interface Controlled {
  state: EditorState;
  stream: CompletionStream;
  cancelled: boolean;
  delta(text: string): void;
  finish(text: string, latencyMs?: number): void;
  fail(code: string, retryAfterMs?: number | null): void;
}

class FakeSource implements CompletionSource {
  readonly requests: Controlled[] = [];
  readonly feedbacks: Array<[number, CompletionOutcome, number]> = [];

  request(state: EditorState): CompletionStream {
    const requestId = this.requests.length + 1;
    let listener: ((received: string) => void) | null = null;
    let resolve!: (result: CompletionResult) => void;
    let received = '';
    const controlled: Controlled = {
      state,
      cancelled: false,
      stream: {
        requestId,
        get received() {
          return received;
        },
        onDelta: (l) => (listener = l),
        result: new Promise<CompletionResult>((r) => (resolve = r)),
        cancel: () => {
          controlled.cancelled = true;
          resolve({ status: 'cancelled', text: '', model: '', latencyMs: null, error: null });
        },
      },
      delta: (text) => {
        received += text;
        listener?.(received);
      },
      finish: (text, latencyMs = 30) => resolve({ status: 'done', text, model: 'fim-test', latencyMs, error: null }),
      fail: (code, retryAfterMs = null) =>
        resolve({ status: 'failed', text: '', model: '', latencyMs: null, error: { code: code as never, message: `failed: ${code}`, retryAfterMs } }),
    };
    this.requests.push(controlled);
    return controlled.stream;
  }

  feedback(requestId: number, outcome: CompletionOutcome, latencyMs: number): void {
    this.feedbacks.push([requestId, outcome, latencyMs]);
  }

  get inFlight(): number {
    return this.requests.filter((r) => !r.cancelled).length;
  }
}

/** An editor buffer with a cursor that reports to a Completer like the Monaco binding does. */
function setup(initial = 'const n = items.l|', debounce = new AdaptiveDebounce({ initialGapMs: 150, initialLatencyMs: 400 })) {
  const clock = new FakeClock();
  const source = new FakeSource();
  const shown: Array<Suggestion | null> = [];
  const completer = new Completer({ source, timers: clock, debounce, onSuggestion: (s) => shown.push(s) });
  let text = initial.replace('|', '');
  let cursor = initial.indexOf('|');
  const window = 100;
  const state = (): EditorState => ({ fileId: 'f1', index: cursor, prefix: text.slice(Math.max(0, cursor - window), cursor), suffix: text.slice(cursor, cursor + window), openFileIds: [] });
  const editor = {
    type(chars: string, gapMs = 100) {
      for (const c of chars) {
        clock.advance(gapMs);
        text = text.slice(0, cursor) + c + text.slice(cursor);
        cursor++;
        completer.edited(state());
      }
    },
    backspace() {
      clock.advance(100);
      text = text.slice(0, cursor - 1) + text.slice(cursor);
      cursor--;
      completer.edited(state());
    },
    move(to: number) {
      cursor = to;
      completer.cursorMoved(state());
    },
    /** Inserts what `accept` returned, as the editor would. */
    insert(chars: string) {
      text = text.slice(0, cursor) + chars + text.slice(cursor);
      cursor += chars.length;
      completer.edited(state());
    },
    get text() {
      return text;
    },
  };
  return { clock, source, completer, editor, shown, state };
}

const flushPromises = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Completer', () => {
  it('asks after the debounce, once the user pauses, with at most one request in flight', async () => {
    const { clock, source, editor } = setup();
    editor.type('e');
    expect(source.requests).toHaveLength(0);
    editor.type('n');
    clock.advance(500);
    expect(source.requests).toHaveLength(1);
    expect(source.requests[0]!.state.prefix.endsWith('items.len')).toBe(true);
    // Typed while it runs, before anything streamed: nothing says it was predicted, so it is stale.
    editor.type('g');
    expect(source.requests[0]!.cancelled).toBe(true);
    clock.advance(500);
    expect(source.requests).toHaveLength(2);
    expect(source.requests[1]!.state.prefix.endsWith('items.leng')).toBe(true);
    expect(source.inFlight).toBe(1);
  });

  it('typing the predicted characters keeps the suggestion, trimmed, without a request', async () => {
    const { clock, source, completer, editor } = setup();
    editor.type('e');
    clock.advance(500);
    source.requests[0]!.finish('ngth;');
    await flushPromises();
    expect(completer.suggestion?.text).toBe('ngth;');
    editor.type('ng');
    clock.advance(1000);
    expect(completer.suggestion).toMatchObject({ text: 'th;', index: editor.text.length });
    expect(source.requests).toHaveLength(1);
    expect(completer.stats.reused).toBe(2);
  });

  it('typing something else dismisses it and asks again', async () => {
    const { clock, source, completer, editor } = setup();
    editor.type('e');
    clock.advance(500);
    source.requests[0]!.finish('ngth;');
    await flushPromises();
    editor.type('x');
    expect(completer.suggestion).toBeNull();
    expect(source.feedbacks).toContainEqual([1, 'dismissed', 0]);
    clock.advance(500);
    expect(source.requests).toHaveLength(2);
  });

  it('keeps an in-flight request whose stream agrees with what is typed, and trims its result', async () => {
    const { clock, source, completer, editor } = setup();
    editor.type('e');
    clock.advance(500);
    const flight = source.requests[0]!;
    flight.delta('ngt');
    editor.type('ng');
    expect(flight.cancelled).toBe(false);
    flight.delta('h;');
    flight.finish('ngth;');
    await flushPromises();
    expect(completer.suggestion?.text).toBe('th;');
    expect(source.requests).toHaveLength(1);
  });

  it('cancels a stale request at the next keystroke, or at the delta that contradicts it', async () => {
    const { clock, source, editor } = setup();
    editor.type('e');
    clock.advance(500);
    source.requests[0]!.delta('ngth');
    editor.type('x');
    expect(source.requests[0]!.cancelled).toBe(true);
    clock.advance(500);
    const second = source.requests[1]!;
    second.delta('y');
    editor.type('y'); // what it streamed so far: kept
    expect(second.cancelled).toBe(false);
    second.delta('z');
    expect(second.cancelled).toBe(false);
    editor.type('q'); // leaves the prediction: cancelled
    expect(second.cancelled).toBe(true);
    clock.advance(500);
    const third = source.requests[2]!;
    third.delta('ab');
    editor.type('abc'); // ahead of the stream but agreeing with it: kept
    expect(third.cancelled).toBe(false);
    third.delta('x'); // the stream leaves what was typed: cancelled at that delta
    expect(third.cancelled).toBe(true);
    expect(source.inFlight).toBe(0);
  });

  it('shows a cached suggestion again when the user comes back to the same place', async () => {
    const { clock, source, completer, editor } = setup();
    editor.type('e');
    clock.advance(500);
    source.requests[0]!.finish('ngth;');
    await flushPromises();
    editor.type('x');
    editor.backspace();
    expect(completer.suggestion?.text).toBe('ngth;');
    expect(completer.stats.cacheHits).toBe(1);
    clock.advance(1000);
    expect(source.requests.length).toBe(1);
  });

  it('Tab accepts all, Ctrl/Cmd-Right the next word; feedback says accepted once', async () => {
    const { clock, source, completer, editor } = setup('const total = |');
    editor.type(' ');
    clock.advance(500);
    source.requests[0]!.finish('sum(items) + tax;');
    await flushPromises();
    const word = completer.accept('word')!;
    expect(word).toBe('sum');
    editor.insert(word);
    expect(completer.suggestion?.text).toBe('(items) + tax;');
    const rest = completer.accept('all')!;
    editor.insert(rest);
    expect(editor.text).toBe('const total =  sum(items) + tax;');
    expect(completer.suggestion).toBeNull();
    expect(source.feedbacks.filter(([, outcome]) => outcome === 'accepted')).toHaveLength(1);
  });

  it('Esc and cursor moves dismiss; disabling stops asking', async () => {
    const { clock, source, completer, editor } = setup();
    editor.type('e');
    clock.advance(500);
    source.requests[0]!.finish('ngth;');
    await flushPromises();
    completer.dismiss();
    expect(completer.suggestion).toBeNull();
    editor.type('n');
    clock.advance(500);
    editor.move(0);
    expect(source.requests[1]!.cancelled).toBe(true);
    completer.setEnabled(false);
    editor.type('abc');
    clock.advance(2000);
    expect(source.requests).toHaveLength(2);
    expect(source.feedbacks.filter(([, o]) => o === 'dismissed')).toHaveLength(1);
  });

  it('an indentation made by the Tab key asks for nothing and ends what was shown', async () => {
    const { clock, source, completer, editor } = setup('|');
    editor.type('x');
    clock.advance(500);
    source.requests[0]!.finish(' // eslint-disable-next-line');
    await flushPromises();
    expect(completer.suggestion).not.toBeNull();
    // Tab pressed once the ghost showed accepts it (the editor's binding); an indenting Tab is no typing.
    completer.indented();
    expect(completer.suggestion).toBeNull();
    expect(completer.accept('all')).toBeNull();
    clock.advance(1000);
    expect(source.requests).toHaveLength(1);
  });

  it('reports keystroke-to-ghost latency with the shown feedback, and counts for the HUD', async () => {
    const { clock, source, completer, editor } = setup();
    editor.type('e');
    clock.advance(300);
    clock.advance(45);
    source.requests[0]!.finish('ngth;', 12);
    await flushPromises();
    const delay = 345;
    expect(source.feedbacks).toContainEqual([1, 'shown', delay]);
    expect(completer.stats).toMatchObject({ requested: 1, shown: 1, lastLatencyMs: delay, lastProviderMs: 12, model: 'fim-test', running: false });
  });

  it('backs off after failures a retry cannot fix, and for as long as a rate limit says', async () => {
    const { clock, source, completer, editor } = setup();
    editor.type('e');
    clock.advance(500);
    source.requests[0]!.fail('rate_limited', 2_000);
    await flushPromises();
    editor.type('n');
    clock.advance(500);
    expect(source.requests).toHaveLength(1);
    clock.advance(2_000);
    editor.type('g');
    clock.advance(500);
    expect(source.requests).toHaveLength(2);
    source.requests[1]!.fail('not_configured');
    await flushPromises();
    expect(completer.stats.problem).toBe('failed: not_configured');
    editor.type('t');
    clock.advance(60_000);
    expect(source.requests).toHaveLength(2);
  });
});

describe('what was typed since a suggestion', () => {
  const at = (prefix: string, suffix = ';\n', index = prefix.length): EditorState => ({ fileId: 'f', index, prefix, suffix, openFileIds: [] });
  it('is the inserted text when only that happened', () => {
    expect(typedSince(at('items.l'), at('items.len'))).toBe('en');
    expect(typedSince(at('items.l'), at('items.l'))).toBe('');
  });
  it('is null after a deletion, an edit after the cursor, or in another file', () => {
    expect(typedSince(at('items.l'), at('items.'))).toBeNull();
    expect(typedSince(at('items.l'), at('items.le', ')\n'))).toBeNull();
    expect(typedSince(at('items.l'), { ...at('items.le'), fileId: 'g' })).toBeNull();
    expect(typedSince(at('items.l'), at('itemz.le'))).toBeNull();
  });
  it('works with windows of the text, not only the whole file', () => {
    // Windows of 5 characters before the cursor, at offsets 100 and 102.
    expect(typedSince(at('ems.l', ';', 100), at('s.len', ';', 102))).toBe('en');
  });
});

describe('accepting the next word', () => {
  it.each([
    ['sum(items)', 'sum'],
    ['(items)', '('],
    ['  return x;', '  return'],
    [').map(f)', ').'],
  ])('%j → %j', (text, word) => expect(nextWord(text)).toBe(word));
});

describe('AdaptiveDebounce', () => {
  const typing = (debounce: AdaptiveDebounce, gapMs: number, keys = 20) => {
    for (let i = 0; i < keys; i++) debounce.keystroke(i * gapMs);
  };

  it('asks almost at once when the model answers faster than the user types', () => {
    const debounce = new AdaptiveDebounce();
    typing(debounce, 150);
    for (let i = 0; i < 10; i++) debounce.observeLatency(40);
    expect(debounce.delayMs()).toBe(20);
  });

  it('waits for a pause longer than the typing rhythm when the model is slower than it', () => {
    const debounce = new AdaptiveDebounce();
    typing(debounce, 100);
    for (let i = 0; i < 10; i++) debounce.observeLatency(600);
    expect(debounce.delayMs()).toBe(150);
  });

  it('is bounded, and a pause is not taken for rhythm', () => {
    const debounce = new AdaptiveDebounce();
    typing(debounce, 400);
    for (let i = 0; i < 10; i++) debounce.observeLatency(2_000);
    expect(debounce.delayMs()).toBe(300);
    const before = debounce.estimates.gapMs;
    debounce.keystroke(20 * 400 + 5_000);
    expect(debounce.estimates.gapMs).toBe(before);
  });

  it('starts by assuming a fast model: ask after the minimum until answers say otherwise', () => {
    const debounce = new AdaptiveDebounce();
    expect(debounce.delayMs()).toBe(20);
    for (let i = 0; i < 5; i++) debounce.observeLatency(600);
    expect(debounce.delayMs()).toBe(270);
  });
});

describe('CompletionCache', () => {
  it('keys by file, the end of the prefix and the start of the suffix; evicts the least recently used', () => {
    const cache = new CompletionCache(2, 4, 2);
    const at = (fileId: string, prefix: string, suffix: string) => ({ fileId, prefix, suffix });
    cache.set(at('f', 'xxabcd', 'efgh'), { requestId: 1, text: 'one' });
    expect(cache.get(at('f', 'yyabcd', 'efzz'))?.text).toBe('one');
    expect(cache.get(at('g', 'yyabcd', 'efzz'))).toBeUndefined();
    cache.set(at('f', 'b', ''), { requestId: 2, text: 'two' });
    cache.get(at('f', 'abcd', 'ef'));
    cache.set(at('f', 'c', ''), { requestId: 3, text: 'three' });
    expect(cache.get(at('f', 'b', ''))).toBeUndefined();
    expect(cache.get(at('f', 'abcd', 'ef'))?.text).toBe('one');
    expect(cache.size).toBe(2);
  });
});
