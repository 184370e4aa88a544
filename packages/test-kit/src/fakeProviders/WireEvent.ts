/**
 * The events a real OpenAI server streams, as data: Chat Completions chunks and Responses
 * streaming events. The fake server frames them as SSE or WebSocket messages and injects faults
 * between them.
 */
import { argumentChunks, callArguments, scriptChunks, scriptText, scriptUsage, type FakeScript } from './FakeScript';

export interface WireEvent {
  /** The SSE `event:` name (Responses events carry their type there too). */
  name?: string;
  /** JSON-serialisable payload, or a raw string sent as-is (`[DONE]`). */
  payload: unknown;
  /** A delta of text or of a call's arguments: faults and holds are positioned by how many of these went out. */
  isText: boolean;
}

const created = 1_700_000_000;

/** Chat Completions chunks; a usage chunk with `choices: []` when the client asked for it. */
/** The final usage chunk (`choices: []`) OpenAI-compatible streams send with include_usage. */
export function usageChunk(base: Record<string, unknown>, script: FakeScript): WireEvent {
  const usage = scriptUsage(script);
  return {
    payload: {
      ...base,
      choices: [],
      usage: {
        prompt_tokens: usage.inputTokens,
        completion_tokens: usage.outputTokens,
        total_tokens: usage.inputTokens + usage.outputTokens,
        prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
      },
    },
    isText: false,
  };
}

/** `id`: the completion's, repeated in every event as real servers do (each completion has its own). */
export function chatCompletionWire(script: FakeScript, model: string, includeUsage: boolean, id = 'chatcmpl-fake'): WireEvent[] {
  const base = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake' };
  const usageField = includeUsage ? { usage: null } : {};
  const events: WireEvent[] = [];
  const chunk = (choices: unknown, isText: boolean): void => {
    events.push({ payload: { ...base, choices, ...usageField }, isText });
    if (script.nullChoices) events.push({ payload: { ...base, choices: null }, isText: false });
  };
  const calls = script.toolCalls ?? [];
  // OpenAI opens an answer that only calls tools with `content: null`.
  const opening = calls.length > 0 && scriptText(script) === '' ? null : '';
  chunk([{ index: 0, delta: { role: 'assistant', content: opening }, logprobs: null, finish_reason: null }], false);
  for (const content of scriptChunks(script)) {
    chunk([{ index: 0, delta: { content }, logprobs: null, finish_reason: null }], true);
  }
  calls.forEach((call, index) => {
    const callId = call.id ?? `call_${index}_${id.slice(-6)}`;
    const head = { index, id: callId, type: 'function', function: { name: call.name, arguments: '' } };
    chunk([{ index: 0, delta: { tool_calls: [head] }, logprobs: null, finish_reason: null }], false);
    for (const piece of argumentChunks(script, call)) {
      chunk([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }], true);
    }
  });
  const finish = calls.length > 0 ? 'tool_calls' : (script.finishReason ?? 'stop');
  chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }], false);
  if (includeUsage) events.push(usageChunk(base, script));
  events.push({ payload: '[DONE]', isText: false });
  return events;
}

/** A Chat Completions error chunk, as vLLM and OpenRouter send when generation fails mid-stream. */
export function chatCompletionErrorChunk(code: string, message: string): WireEvent {
  return { payload: { error: { code, message, type: 'server_error' } }, isText: false };
}

/** The Responses streaming events for one response, from `response.created` to its terminal event. */
export function responsesWire(script: FakeScript, responseId: string, model: string): WireEvent[] {
  let sequence = 0;
  const events: WireEvent[] = [];
  const emit = (type: string, fields: Record<string, unknown>, isText = false): void => {
    events.push({ name: type, payload: { type, sequence_number: sequence++, ...fields }, isText });
  };
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: responseId,
    object: 'response',
    created_at: created,
    status,
    model,
    output: [],
    error: null,
    incomplete_details: null,
    usage: null,
    ...extra,
  });
  const itemId = `msg_${responseId}`;
  const calls = script.toolCalls ?? [];
  const text = scriptText(script);
  const output: unknown[] = [];
  emit('response.created', { response: response('in_progress') });
  emit('response.in_progress', { response: response('in_progress') });
  // An answer that only calls tools has no message item.
  if (text !== '' || calls.length === 0) {
    emit('response.output_item.added', {
      output_index: 0,
      item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    emit('response.content_part.added', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const delta of scriptChunks(script)) {
      emit('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta, logprobs: [] }, true);
    }
    const part = { type: 'output_text', text, annotations: [] };
    const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    emit('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] });
    emit('response.content_part.done', { item_id: itemId, output_index: 0, content_index: 0, part });
    emit('response.output_item.done', { output_index: 0, item });
    output.push(item);
  }
  calls.forEach((call, index) => {
    const outputIndex = output.length;
    const callItem = { id: `fc_${responseId}_${index}`, type: 'function_call', status: 'in_progress', call_id: call.id ?? `call_${index}_${responseId}`, name: call.name, arguments: '' };
    emit('response.output_item.added', { output_index: outputIndex, item: callItem });
    for (const delta of argumentChunks(script, call)) {
      emit('response.function_call_arguments.delta', { item_id: callItem.id, output_index: outputIndex, delta }, true);
    }
    const args = callArguments(call);
    emit('response.function_call_arguments.done', { item_id: callItem.id, output_index: outputIndex, arguments: args });
    const done = { ...callItem, status: 'completed', arguments: args };
    emit('response.output_item.done', { output_index: outputIndex, item: done });
    output.push(done);
  });
  const u = scriptUsage(script);
  const usage = {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.inputTokens + u.outputTokens,
  };
  if (script.finishReason === 'length') {
    emit('response.incomplete', {
      response: response('incomplete', { output, usage, incomplete_details: { reason: 'max_output_tokens' } }),
    });
  } else {
    emit('response.completed', { response: response('completed', { output, usage }) });
  }
  return events;
}

/** `response.failed`, as the Responses API reports a failure after the response was created. */
export function responsesFailedEvent(responseId: string, code: string, message: string): WireEvent {
  return {
    name: 'response.failed',
    payload: {
      type: 'response.failed',
      sequence_number: 9999,
      response: { id: responseId, object: 'response', status: 'failed', error: { code, message }, usage: null },
    },
    isText: false,
  };
}
