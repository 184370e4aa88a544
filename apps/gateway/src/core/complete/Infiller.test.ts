import { propertyConfig, seededRandom } from '@flint/test-kit';
import { describe, expect, it } from 'vitest';
import type { InfillRequest, ModelEvent, ModelProvider, ModelRequest, PromptRequest } from '../ports/ModelProvider';
import { ChatInfillFilter } from './chatInfill';
import type { FimPrompt } from './fimTemplates';
import { createInfiller, resolveFimMode } from './Infiller';

/** Records what the infiller asked of it and answers with `reply`, cut into `chunks`. */
function recordingProvider(kind: string, reply: string[], methods: { prompt?: boolean; infill?: boolean } = {}) {
  const seen: { stream: ModelRequest[]; prompt: PromptRequest[]; infill: Array<{ prefix: string; suffix: string; request: InfillRequest }> } = { stream: [], prompt: [], infill: [] };
  async function* play(): AsyncGenerator<ModelEvent> {
    for (const text of reply) yield { type: 'text', text };
    yield { type: 'done', finishReason: 'stop' };
  }
  const provider: ModelProvider = {
    kind,
    close: async () => undefined,
    stream: (request) => (seen.stream.push(request), play()),
  };
  if (methods.prompt) provider.completePrompt = (request) => (seen.prompt.push(request), play());
  if (methods.infill) provider.infill = (prefix, suffix, request) => (seen.infill.push({ prefix, suffix, request }), play());
  return { provider, seen };
}

async function textOf(events: AsyncIterable<ModelEvent>): Promise<string> {
  let text = '';
  for await (const event of events) if (event.type === 'text') text += event.text;
  return text;
}

const prompt: FimPrompt = {
  path: 'src/cart.ts',
  prefix: 'export function total(items: Item[]) {\n  return ',
  suffix: ';\n}\n',
  snippets: [{ path: 'src/item.ts', text: 'export interface Item { price: number }' }],
  singleLine: true,
};
const settings = { maxOutputTokens: 64, stop: ['\n'] };
const signal = new AbortController().signal;

describe('choosing how to fill the middle', () => {
  it('configuration wins; else embedded → infill, a FIM model name → its template, anything else → chat', () => {
    const chat = recordingProvider('openai-chat', [], { prompt: true }).provider;
    const embedded = recordingProvider('embedded', [], { infill: true }).provider;
    const responses = recordingProvider('openai-responses', []).provider;
    expect(resolveFimMode(chat, 'gpt-oss-120b', 'qwen')).toBe('qwen');
    expect(resolveFimMode(embedded, 'flint-tiny')).toBe('infill');
    expect(resolveFimMode(chat, 'qwen2.5-coder-1.5b')).toBe('qwen');
    expect(resolveFimMode(chat, 'gpt-oss-120b')).toBe('chat');
    // A Responses model cannot take a raw prompt, whatever its name says.
    expect(resolveFimMode(responses, 'deepseek-coder')).toBe('chat');
  });

  it('a template mode sends the rendered prompt as a raw completion, with the template\'s stops and ours', async () => {
    const { provider, seen } = recordingProvider('openai-chat', ['items.reduce', '(…)'], { prompt: true });
    const infiller = createInfiller(provider, 'qwen2.5-coder-7b');
    expect(await textOf(infiller.infill(prompt, settings, signal))).toBe('items.reduce(…)');
    expect(seen.prompt).toHaveLength(1);
    expect(seen.prompt[0]!.prompt).toMatch(/^<\|repo_name\|>workspace\n<\|file_sep\|>src\/item\.ts\n.*<\|fim_prefix\|>export function total/s);
    expect(seen.prompt[0]!.stop).toEqual(expect.arrayContaining(['<|endoftext|>', '\n']));
    expect(seen.prompt[0]).toMatchObject({ model: 'qwen2.5-coder-7b', maxOutputTokens: 64, temperature: 0 });
  });

  it('native infill passes snippets as input_extra, except to the embedded model', async () => {
    const server = recordingProvider('openai-chat', ['x'], { infill: true });
    await textOf(createInfiller(server.provider, 'any', 'infill').infill(prompt, settings, signal));
    expect(server.seen.infill[0]).toMatchObject({ prefix: prompt.prefix, suffix: prompt.suffix, request: { extra: [{ filename: 'src/item.ts', text: prompt.snippets[0]!.text }] } });
    const embedded = recordingProvider('embedded', ['x'], { infill: true });
    await textOf(createInfiller(embedded.provider, 'flint-tiny').infill({ ...prompt }, { ...settings, threadId: 'w:f' }, signal));
    expect(embedded.seen.infill[0]!.request).toMatchObject({ extra: undefined, threadId: 'w:f' });
  });

  it('a strategy the provider lacks fails as not_configured, with what to do', async () => {
    const { provider } = recordingProvider('openai-responses', []);
    await expect(textOf(createInfiller(provider, 'm', 'deepseek').infill(prompt, settings, signal))).rejects.toMatchObject({ code: 'not_configured' });
    await expect(textOf(createInfiller(provider, 'm', 'infill').infill(prompt, settings, signal))).rejects.toMatchObject({ code: 'not_configured' });
  });

  it('chat mode marks the cursor and strips a fence and a restated line from the answer', async () => {
    const { provider, seen } = recordingProvider('openai-responses', ['```ts\n', '  return items', '.length', '\n```']);
    const text = await textOf(createInfiller(provider, 'gpt-5.4-mini').infill(prompt, settings, signal));
    expect(text).toBe('items.length');
    const user = seen.stream[0]!.messages.at(-1)!.content;
    expect(user).toContain('  return <CURSOR>;\n}');
    expect(user).toContain('From src/item.ts:');
    expect(seen.stream[0]!.messages[0]!.content).toContain('only the rest of the current line');
  });
});

describe('ChatInfillFilter', () => {
  const cases: Array<[string, string, string]> = [
    ['plain text passes', 'x = ', 'a + b'],
    ['an opening fence line goes', 'x = ', '```python\na + b'],
    ['a closing fence goes', 'x = ', 'a + b\n```'],
    ['a restated line start goes', '  const total = ', 'const total = items.length'],
    ['a short line start is not an echo', 'x', 'x + 1'],
    ['backticks that are code stay', 'const s = ', '`hello ${name}`'],
  ];
  const expected = ['a + b', 'a + b', 'a + b', 'items.length', 'x + 1', '`hello ${name}`'];

  it.each(cases.map((c, i) => [...c, expected[i]!] as const))('%s', (_name, linePrefix, output, want) => {
    const filter = new ChatInfillFilter(linePrefix);
    expect(filter.push(output) + filter.finish()).toBe(want);
  });

  const { seed, iterations } = propertyConfig(200);
  it(`gives the same text for any chunking of the answer (SEED=${seed} ITERATIONS=${iterations})`, () => {
    for (let i = 0; i < iterations; i++) {
      const random = seededRandom(seed + i);
      const [, linePrefix, output] = cases[Math.floor(random() * cases.length)]!;
      const whole = new ChatInfillFilter(linePrefix);
      const want = whole.push(output) + whole.finish();
      const filter = new ChatInfillFilter(linePrefix);
      let got = '';
      for (let at = 0; at < output.length; ) {
        const size = 1 + Math.floor(random() * 5);
        got += filter.push(output.slice(at, at + size));
        at += size;
      }
      got += filter.finish();
      if (got !== want) throw new Error(`replay with SEED=${seed + i} ITERATIONS=1: ${JSON.stringify(got)} !== ${JSON.stringify(want)}`);
    }
  });
});
