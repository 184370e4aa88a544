import { describe, expect, it } from 'vitest';
import { parseChatChunk } from './chatChunk';

const openAiText = (content: string, delta: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1760000000,
    model: 'gpt-oss-120b',
    choices: [{ index: 0, delta: { ...delta, content }, logprobs: null, finish_reason: null }],
    usage: null,
    obfuscation: 'lRK2aBv',
  });

describe('parseChatChunk', () => {
  it('reads the text of an event, escapes and all, and of the first event that names the role', () => {
    expect(parseChatChunk(openAiText('  const a = "\\u00e9";\n'))).toEqual({ text: '  const a = "\\u00e9";\n', finishReason: null, usage: null, final: false, error: null });
    expect(parseChatChunk(openAiText('', { role: 'assistant' }))?.text).toBe('');
    expect(parseChatChunk(JSON.stringify({ choices: null }))?.text).toBe('');
  });

  it('reads a finish reason, usage with cached tokens, an in-band error and [DONE]', () => {
    expect(parseChatChunk(JSON.stringify({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'length' }] }))).toEqual({ text: 'x', finishReason: 'length', usage: null, final: false, error: null });
    expect(parseChatChunk(JSON.stringify({ choices: [{ delta: {}, finish_reason: 'stop' }] }))?.finishReason).toBe('stop');
    const usage = JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } } });
    expect(parseChatChunk(usage)?.usage).toEqual({ inputTokens: 3, outputTokens: 4, cachedInputTokens: 2 });
    expect(parseChatChunk('{"error":{"message":"overloaded"}}')?.error).toEqual({ error: { message: 'overloaded' } });
    expect(parseChatChunk('[DONE]')?.final).toBe(true);
  });

  it('gives null for what is not a JSON object, for the caller to report as bad_response', () => {
    expect(parseChatChunk('{"choices":[{"delta":{"content":"cut')).toBeNull();
    expect(parseChatChunk('{"choices":[{"delta":{"content":"raw\u0001control"}}]}')).toBeNull();
    expect(parseChatChunk('42')).toBeNull();
    expect(parseChatChunk('null')).toBeNull();
  });
});
