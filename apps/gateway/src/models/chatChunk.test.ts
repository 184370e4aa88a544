import { propertyConfig, seededRandom } from '@flint/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatChunkReader, parseChatChunk } from './chatChunk';

const { seed, iterations } = propertyConfig(3000);

/** OpenAI's padding field, last in every streamed event (`stream_options.include_obfuscation`). */
const obfuscated = (data: string, value: string) => `${data.slice(0, -1)},"obfuscation":${JSON.stringify(value)}}`;

const openAiText = (content: string) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1760000000,
    model: 'gpt-oss-120b',
    system_fingerprint: 'fp_1',
    choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
    usage: null,
  });

describe('ChatChunkReader', () => {
  afterEach(() => vi.restoreAllMocks());
  const reader = new ChatChunkReader();
  const readChatChunk = (data: string) => reader.chunk(data);

  it('reads a text-only event without JSON.parse, escapes and all', () => {
    const parse = vi.spyOn(JSON, 'parse');
    expect(readChatChunk(openAiText('  const a = 1;'))).toEqual({ text: '  const a = 1;', finishReason: null, usage: null, final: false, error: null });
    expect(parse).not.toHaveBeenCalled();
    // Escapes (quotes included) decode exactly as JSON.parse would: only the string literal is parsed.
    expect(readChatChunk(openAiText('say "hi"\n\t\\ é 🚀'))?.text).toBe('say "hi"\n\t\\ é 🚀');
    expect(parse.mock.calls.map(([text]) => String(text))).toEqual([JSON.stringify('say "hi"\n\t\\ é 🚀')]);
  });

  it("takes the fast reading for the text events of the servers Flint talks to, whatever their field order", () => {
    const events = [
      // OpenAI with include_usage
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1760000000,"model":"gpt-5","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}],"usage":null}',
      // Cerebras: delta before index, object last
      '{"id":"chatcmpl-2","choices":[{"delta":{"content":"x"},"index":0}],"created":1760000000,"model":"gpt-oss-120b","system_fingerprint":"fp_1","object":"chat.completion.chunk"}',
      // llama-server: finish_reason (null) before the delta
      '{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"x"}}],"created":1760000000,"id":"chatcmpl-3","model":"flint-tiny","system_fingerprint":"b1-abc","object":"chat.completion.chunk"}',
      // a stream's first event, naming the role (OpenAI, Cerebras, Groq, vLLM)
      '{"id":"chatcmpl-5","object":"chat.completion.chunk","created":1760000000,"model":"gpt-5","choices":[{"index":0,"delta":{"role":"assistant","content":"x"},"finish_reason":null}]}',
      // OpenAI pads each event with random characters
      obfuscated('{"id":"chatcmpl-6","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4.1","service_tier":"default","system_fingerprint":"fp_3","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}]}', 'lRK2aBv'),
      // vLLM / Groq after their first event
      '{"id":"chatcmpl-4","object":"chat.completion.chunk","created":1760000000,"model":"openai/gpt-oss-20b","system_fingerprint":"fp_2","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"finish_reason":null}]}',
    ];
    const parse = vi.spyOn(JSON, 'parse');
    for (const data of events) expect(readChatChunk(data)?.text).toBe('x');
    expect(parse).not.toHaveBeenCalled();
  });

  it('checks a stream\'s envelope once, even while other streams with other ids interleave', () => {
    const event = (id: string, content: string) => openAiText(content).replace('chatcmpl-1', id);
    const streams = ['chatcmpl-a', 'chatcmpl-b', 'chatcmpl-c'].map((id) => {
      const reader = new ChatChunkReader();
      return { id, read: (data: string) => reader.chunk(data) };
    });
    for (const { id, read } of streams) expect(read(event(id, 'first'))?.text).toBe('first');
    const test = vi.spyOn(RegExp.prototype, 'test');
    for (let i = 0; i < 10; i++) for (const { id, read } of streams) expect(read(event(id, `t${i}`))?.text).toBe(`t${i}`);
    expect(test).not.toHaveBeenCalled();
  });

  it("checks an envelope once when only its obfuscation padding differs from event to event, and no padding that would need decoding", () => {
    const reader = new ChatChunkReader();
    expect(reader.chunk(obfuscated(openAiText('first'), 'ZGF'))?.text).toBe('first');
    const test = vi.spyOn(RegExp.prototype, 'test');
    const parse = vi.spyOn(JSON, 'parse');
    for (const [i, pad] of ['lRK2aBv', 'kJ', '', '0wmdEAC'].entries()) expect(reader.chunk(obfuscated(openAiText(`t${i}`), pad))?.text).toBe(`t${i}`);
    expect(test).not.toHaveBeenCalled();
    expect(parse).not.toHaveBeenCalled();
    // A padding with an escape is not compared in place: the envelope is checked (and still read right).
    expect(reader.chunk(obfuscated(openAiText('t'), 'a"b'))?.text).toBe('t');
    expect(test).toHaveBeenCalled();
  });

  it('reads a stream\'s first event, which names the role, in place; the text events after it without checking their envelope again', () => {
    const reader = new ChatChunkReader();
    const event = (delta: string) => `{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1760000000,"model":"gpt-oss-120b","choices":[{"index":0,"delta":${delta},"finish_reason":null}]}`;
    const parse = vi.spyOn(JSON, 'parse');
    expect(reader.chunk(event('{"role":"assistant","content":""}'))).toEqual({ text: '', finishReason: null, usage: null, final: false, error: null });
    const test = vi.spyOn(RegExp.prototype, 'test');
    expect(reader.chunk(event('{"content":"export"}'))?.text).toBe('export');
    expect(test).not.toHaveBeenCalled();
    expect(parse).not.toHaveBeenCalled();
  });

  it('reads everything else in full: finish reason, usage, errors, [DONE], malformed JSON', () => {
    const finish = JSON.stringify({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'length' }] });
    expect(readChatChunk(finish)).toEqual({ text: 'x', finishReason: 'length', usage: null, final: false, error: null });
    const usage = JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } });
    expect(readChatChunk(usage)?.usage).toEqual({ inputTokens: 3, outputTokens: 4, cachedInputTokens: 0 });
    expect(readChatChunk('{"error":{"message":"overloaded"}}')?.error).toEqual({ error: { message: 'overloaded' } });
    expect(readChatChunk('[DONE]')?.final).toBe(true);
    expect(readChatChunk('{"choices":[{"delta":{"content":"cut')).toBeNull();
    expect(readChatChunk('{"choices":[{"delta":{"content":"raw\u0001control"}}]}')).toBeNull();
  });

  it('never reads an event that carries tool calls as text, even in the envelope it accepted for text', () => {
    const reader = new ChatChunkReader();
    expect(reader.chunk(openAiText('Reading.'))?.text).toBe('Reading.');
    const withDelta = (delta: object) => openAiText('').replace('{"content":""}', JSON.stringify(delta));
    const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '' } };
    const piece = { index: 0, function: { arguments: '{"delta":{"content":"x"}}' } };
    const expected = (text: string, pieces: object[]) => ({ text, finishReason: null, usage: null, final: false, error: null, toolCalls: pieces });
    // OpenAI opens a call with the role and null content; others with '' content, or text first.
    expect(reader.chunk(withDelta({ role: 'assistant', content: null, tool_calls: [call] }))).toEqual(expected('', [{ index: 0, id: 'call_1', name: 'read_file', arguments: '' }]));
    expect(reader.chunk(withDelta({ role: 'assistant', content: '', tool_calls: [call] }))?.toolCalls).toHaveLength(1);
    expect(reader.chunk(withDelta({ content: 'then ', tool_calls: [piece] }))).toEqual(expected('then ', [{ index: 0, id: null, name: null, arguments: '{"delta":{"content":"x"}}' }]));
    expect(reader.chunk(withDelta({ tool_calls: [piece], content: 'x' }))?.toolCalls).toHaveLength(1);
    expect(reader.chunk(withDelta({ tool_calls: [piece] }))?.toolCalls).toHaveLength(1);
    expect(reader.chunk(openAiText('after'))).toEqual({ text: 'after', finishReason: null, usage: null, final: false, error: null });
    expect(readChatChunk(JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }))?.finishReason).toBe('tool_calls');
  });

  it(`gives what a full JSON.parse reading gives, for any event (SEED=${seed} ITERATIONS=${iterations})`, () => {
    for (let i = 0; i < iterations; i++) {
      const random = seededRandom(seed + i);
      const data = randomEvent(random);
      expect(readChatChunk(data), `SEED=${seed + i} ${data}`).toEqual(parseChatChunk(data));
    }
  });
});


/**
 * Chunks as servers send them and as they should not. Most start as a text-only chunk (what the
 * fast reading takes) with one near miss or none; the rest are any shape at all.
 */
function randomEvent(random: () => number): string {
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const pieces = ['a', ' ', '"', '\\', '\n', '\t', 'é', '🚀', '\u2028', '\u0001', '}', ']', ',', ':', 'null', '"delta":{"content":"', '"finish_reason":"stop"', '\\"'];
  const text = () => Array.from({ length: Math.floor(random() * 6) }, () => pick(pieces)).join('');
  const shuffle = <T,>(entries: T[]): T[] => entries.sort(() => random() - 0.5);
  const scalarFields = (): Array<[string, unknown]> =>
    shuffle<[string, unknown]>([
      ['id', 'chatcmpl-1'],
      ['object', 'chat.completion.chunk'],
      ['created', 1760000000],
      ['model', pick(['m', 'gpt-oss', 'a "quoted" model', 'usage', '"error":1'])],
      ['system_fingerprint', 'fp'],
      ['service_tier', null],
      ['flag', pick([true, false, 1.5e3, -2])],
    ]).slice(0, Math.floor(random() * 8));
  if (random() < 0.7) {
    // A text-only chunk: scalar fields around one choice whose delta is just the content.
    const choiceFields = shuffle<[string, unknown]>([
      ['index', 0],
      ['logprobs', null],
      ['finish_reason', null],
    ]).slice(0, Math.floor(random() * 4));
    const before = choiceFields.slice(0, Math.floor(random() * (choiceFields.length + 1)));
    const after = choiceFields.slice(before.length);
    const top = scalarFields();
    const split = Math.floor(random() * (top.length + 1));
    const tail: Array<[string, unknown]> = random() < 0.5 ? [['usage', null]] : [];
    if (random() < 0.3) tail.push(['obfuscation', pick(['ZGF', 'lRK2aBv', '', 'a"b', '\\', '\u0001'])]);
    const choice = Object.fromEntries([...before, ['delta', { content: text() }], ...after]);
    let data = JSON.stringify(Object.fromEntries([...top.slice(0, split), ['choices', [choice]], ...top.slice(split), ...tail]));
    const nearMiss = random();
    const nearMisses: Array<(d: string) => string> = [
      (d) => d.replace('"finish_reason":null', '"finish_reason":"stop"'),
      (d) => d.replace('"finish_reason":null', '"finish_reason":true'),
      (d) => d.replace('"choices":[{', '"choices":[{"finish_reason":"length",'),
      (d) => d.replace('"usage":null', pick(['"usage":5', '"usage":{"prompt_tokens":1}', '"usage":"x"'])),
      (d) => `${d.slice(0, -1)},${pick(['"choices":null', '"delta":null', '"error":"boom"', '"error":null', '"finish_reason":"stop"', '"x":{"y":1}'])}}`,
      (d) => `{${pick(['"error":"boom",', '"error":null,', '"usage":{"a":1},', '"choices":null,'])}${d.slice(1)}`,
      (d) => d.replace('"choices":[{', '"choices":[{"delta":null,'),
      (d) => d.replace(/"content":("(?:[^"\\]|\\.)*")\}/, '"content":$1,"role":"assistant"}'),
      (d) => d.replace(/\}\]/, '},{"index":1,"delta":{"content":"b"}}]'),
      (d) => d.replace(/("content":"(?:[^"\\]|\\.)*")\}/, '$1,"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":1}"}}]}'),
      (d) => d.replace('"delta":{', pick(['"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":""}}],', '"delta":{"tool_calls":[],'])),
      (d) => d.replace('"content":"', '"content":"\u0002'),
      (d) => d.slice(0, Math.floor(random() * d.length)),
      (d) => d.replaceAll(':', ': '),
      (d) => d.replace(/"content":"(?:[^"\\]|\\.)*"/, pick(['"content":null', '"content":7', '"content":["a"]'])),
      (d) => `[${d}]`,
      (d) => d.replace(/"created":\d+/, pick(['"created":01', '"created":1.', '"created":-', '"created":1e'])),
    ];
    if (nearMiss < 0.6) data = pick(nearMisses)(data);
    return data;
  }
  const delta = pick<unknown>([{ content: text() }, { role: 'assistant', content: text() }, { content: null }, {}, null, { content: text(), tool_calls: [{ index: 0 }] }, { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: text() } }] }, { content: null, tool_calls: [{ function: { arguments: { a: 1 } } }] }, { content: 7 }]);
  const choice = Object.fromEntries(
    shuffle<[string, unknown]>([
      ['index', 0],
      ['delta', delta],
      ['logprobs', null],
      ['finish_reason', pick([null, undefined, 'stop', 'length', true])],
    ]),
  );
  const top = shuffle<[string, unknown]>([
    ...scalarFields(),
    ['choices', pick<unknown>([[choice], [choice, { index: 1, delta: { content: 'other' } }], [], null])],
    ['usage', pick([undefined, null, { prompt_tokens: 5, completion_tokens: 2 }, 5])],
    ['error', pick([undefined, null, { message: 'x' }, 'boom'])],
    ['x_groq', pick([undefined, { id: 'req' }])],
  ]);
  return JSON.stringify(Object.fromEntries(top));
}
