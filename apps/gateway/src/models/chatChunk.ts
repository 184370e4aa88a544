/**
 * Reading one Chat Completions stream event (`data:` of a `chat.completion.chunk`). Nearly every
 * event of a stream only carries the next bit of text in the same envelope as the one before;
 * those are read without `JSON.parse`, which costs ~1 µs of the ~1.2 µs an event takes to read
 * (B9; decision 0021 keeps this over the library path for that). Anything else — a finish
 * reason, usage, an error, tool calls, escapes it cannot vouch for — is parsed in full, so both
 * ways give the same result for every input (property-tested).
 */
import type { ChatToolCallPiece } from './chatToolCalls';
import type { CompletionChunk } from './fim/completionWire';
import type { FinishReason } from '../core/ports/ModelProvider';

interface WireToolCall {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null; tool_calls?: unknown } | null; finish_reason?: string | null } | null> | null;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
  } | null;
  error?: unknown;
}

/** A JSON scalar: no objects or arrays, strings without escapes or control characters. */
const scalar = String.raw`(?:null|true|false|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|"[^"\\\u0000-\u001f]*")`;
const field = String.raw`"[A-Za-z_][A-Za-z0-9_]*":${scalar}`;
const contentKey = '"delta":{"content":"';
/**
 * A stream's first event names the role (`{"role":"assistant","content":""}` from OpenAI,
 * Cerebras, Groq, vLLM): read in place too, since the first event is on the path of the first
 * token and a full parse of it after an idle spell costs ~40 µs (B1).
 */
const roleContentKey = '"delta":{"role":"assistant","content":"';
/** Everything before the text: scalar fields, then `choices` whose first element's `delta` starts with `content` (after the assistant's role, maybe). */
const textPrefix = new RegExp(String.raw`^\{(?:${field},)*"choices":\[\{(?:${field},)*"delta":\{(?:"role":"assistant",)?"content":"$`);
/** Everything after it: `delta` closes at once, then scalar fields; one choice; scalar fields. */
const textSuffix = new RegExp(String.raw`^\}(?:,${field})*\}\](?:,${field})*\}$`);

const actedOn = /"(?:finish_reason|usage|error)":(?!null)/;

/**
 * OpenAI pads every streamed event with random characters (`"obfuscation":"lRK2aBv"`, the last
 * field: `stream_options.include_obfuscation`, on by default, a mitigation of packet-size side
 * channels), so no two events' envelopes are alike. An envelope that ends in that field is kept
 * with the value left open: what comes before it is compared, the value only checked to be a
 * plain string.
 */
const obfuscationTail = /,"obfuscation":"[^"\\\u0000-\u001f]*"\}$/;
const obfuscationKey = ',"obfuscation":"';

/** The last envelope (text before and after the content) found to be of a text-only chunk. */
class Envelope {
  prefix = '';
  suffix = '';
  /** A suffix that ends in an obfuscation value: the suffix up to that value (else ''). */
  open = '';

  setSuffix(suffix: string): void {
    this.suffix = suffix;
    const tail = obfuscationTail.exec(suffix);
    this.open = tail ? suffix.slice(0, tail.index + obfuscationKey.length) : '';
  }

  /** `suffix` is the accepted one but for its obfuscation value, and that value is a plain string. */
  sameButObfuscation(suffix: string): boolean {
    const { open } = this;
    return open !== '' && suffix.length >= open.length + 2 && suffix.slice(0, open.length) === open && suffix.endsWith('"}') && plainString(suffix, open.length, suffix.length - 2);
  }
}

/** Whether text [from, end) is a JSON string's content that needs no decoding: no quote, backslash or control character. */
function plainString(text: string, from: number, end: number): boolean {
  for (let i = from; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 34 || code === 92) return false;
  }
  return true;
}

/** The text of an event that carries only text, or null: parse it in full. */
function textOnly(data: string, accepted: Envelope): string | null {
  // A stream repeats the same envelope around every token: checked once, then compared.
  let from: number;
  // (`slice` + `===` compares memory at once; `startsWith` went character by character, 2.5× slower.)
  if (accepted.prefix !== '' && data.slice(0, accepted.prefix.length) === accepted.prefix) from = accepted.prefix.length;
  else {
    let at = data.indexOf(contentKey);
    let key = contentKey;
    if (at === -1) {
      at = data.indexOf(roleContentKey);
      key = roleContentKey;
    }
    if (at === -1) return null;
    from = at + key.length;
    const prefix = data.slice(0, from);
    if (!textPrefix.test(prefix) || actedOn.test(prefix)) return null;
    // The events after the role's carry the same envelope without it: accepted as such, so the
    // first text event is compared, not checked again.
    accepted.prefix = key === contentKey ? prefix : data.slice(0, at) + contentKey;
  }
  const end = stringEnd(data, from);
  if (end === -1) return null;
  const suffix = data.slice(end + 1);
  if (suffix !== accepted.suffix && !accepted.sameButObfuscation(suffix)) {
    // Fields the full reading would act on: a finish reason, usage or an error that is not
    // null; after the text, another `delta` or `choices` (JSON.parse keeps a key's last value).
    if (!textSuffix.test(suffix) || actedOn.test(suffix) || /"(?:delta|choices)":/.test(suffix)) return null;
    accepted.setSuffix(suffix);
  }
  return stringValue(data, from, end);
}

/** Where the JSON string whose text starts at `from` ends: the first quote not escaped by an odd run of backslashes. */
function stringEnd(text: string, from: number): number {
  let end = text.indexOf('"', from);
  while (end !== -1) {
    let backslashes = 0;
    for (let i = end - 1; i >= from && text.charCodeAt(i) === 92; i--) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return -1;
}

/** The value of the JSON string text [from, end), or null where JSON.parse would refuse it. */
function stringValue(text: string, from: number, end: number): string | null {
  let escaped = false;
  for (let i = from; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20) return null;
    if (code === 92) escaped = true;
  }
  const literal = text.slice(from, end);
  if (!escaped) return literal;
  try {
    return JSON.parse(`"${literal}"`) as string;
  } catch {
    return null;
  }
}

/** The full reading: `choices[0].delta.content`; `choices: null` and usage-only chunks carry no text. */
export function parseChatChunk(data: string): CompletionChunk | null {
  if (data === '[DONE]') return { text: '', finishReason: null, usage: null, final: true, error: null };
  let chunk: ChatChunk;
  try {
    const parsed: unknown = JSON.parse(data);
    if (typeof parsed !== 'object' || parsed === null) return null;
    chunk = parsed as ChatChunk;
  } catch {
    // The caller turns null into a typed bad_response.
    return null;
  }
  if (chunk.error !== undefined && chunk.error !== null) return { text: '', finishReason: null, usage: null, final: false, error: chunk };
  const choice = chunk.choices?.[0];
  const finish = choice?.finish_reason;
  const toolCalls = toolCallPieces(choice?.delta?.tool_calls);
  return {
    text: choice?.delta?.content ?? '',
    finishReason: finish ? finishReasonOf(finish) : null,
    usage: chunk.usage
      ? {
          inputTokens: chunk.usage.prompt_tokens ?? 0,
          outputTokens: chunk.usage.completion_tokens ?? 0,
          cachedInputTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
        }
      : null,
    final: false,
    error: null,
    ...(toolCalls && { toolCalls }),
  };
}

function finishReasonOf(finish: string): FinishReason {
  return finish === 'length' || finish === 'tool_calls' ? finish : 'stop';
}

/** `delta.tool_calls`, or null when it holds no entry. */
function toolCallPieces(raw: unknown): ChatToolCallPiece[] | null {
  if (!Array.isArray(raw) || raw.length === 0) return null;
  return raw.map((entry: WireToolCall | null, position) => {
    const fn = entry?.function;
    const args = fn?.arguments;
    return {
      index: typeof entry?.index === 'number' ? entry.index : position,
      id: typeof entry?.id === 'string' && entry.id !== '' ? entry.id : null,
      name: typeof fn?.name === 'string' && fn.name !== '' ? fn.name : null,
      // Arguments are JSON text; a server that sends them as an object sent the whole call at once.
      arguments: typeof args === 'string' ? args : typeof args === 'object' && args !== null ? JSON.stringify(args) : '',
    };
  });
}

/**
 * A reader of one Chat Completions stream's events. One per stream: it remembers that stream's
 * envelope (`id`, `created`, … repeat in every event, and differ between completions), so
 * concurrent streams do not take turns evicting each other's and re-checking it with the
 * regular expressions on every event.
 */
export class ChatChunkReader {
  private readonly accepted = new Envelope();

  /** One event's `data`; null: not JSON (the caller's bad_response). */
  chunk(data: string): CompletionChunk | null {
    const text = textOnly(data, this.accepted);
    return text === null ? parseChatChunk(data) : { text, finishReason: null, usage: null, final: false, error: null };
  }
}
