/**
 * Autocomplete with a chat model that has no FIM tokens (gpt-5.x over Responses, gpt-oss, …):
 * the file is shown with a cursor mark and the model is asked for exactly the text that belongs
 * there. Chat models still wrap code in fences and restate the line they continue, so their
 * output goes through `ChatInfillFilter`.
 */
import type { ModelMessage } from '../ports/ModelProvider';
import type { FimPrompt } from './fimTemplates';

export const cursorMark = '<CURSOR>';

export function chatInfillMessages(prompt: FimPrompt): ModelMessage[] {
  const scope = prompt.singleLine
    ? 'Complete only the rest of the current line.'
    : 'You may write several lines, but stop at the end of the current block or statement.';
  const system = [
    'You are the autocomplete of a code editor.',
    `The user's file is shown with ${cursorMark} where the cursor is.`,
    `Reply with exactly the text to insert at ${cursorMark}: no explanation, no markdown fences, and do not repeat the text before or after the cursor.`,
    scope,
    'If nothing useful fits, reply with nothing.',
  ].join(' ');
  const related = prompt.snippets.map((s) => `From ${s.path}:\n${s.text}`).join('\n\n');
  const user = `${related ? `Related code in other open files:\n\n${related}\n\n` : ''}File ${prompt.path}:\n${prompt.prefix}${cursorMark}${prompt.suffix}`;
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

const fence = '```';

/**
 * Drops an opening fence line, a restatement of the cursor line's start, and a closing fence,
 * streaming: it holds back only what could still turn out to be one of them.
 */
export class ChatInfillFilter {
  private head = '';
  private headDone = false;
  private tail = '';
  private readonly echo: string;

  /** `linePrefix`: the cursor line up to the cursor, which chat models like to repeat. */
  constructor(linePrefix: string) {
    const start = linePrefix.trimStart();
    this.echo = start.trim().length >= 3 ? start : '';
  }

  push(chunk: string): string {
    if (this.headDone) return this.holdTail(chunk);
    this.head += chunk;
    const decided = this.decideHead(false);
    return decided === null ? '' : this.holdTail(decided);
  }

  finish(): string {
    // The tail only fills once the head is decided.
    const all = this.headDone ? this.tail : (this.decideHead(true) ?? '');
    this.tail = '';
    const newline = all.lastIndexOf('\n');
    if (/^\s*`{3}\s*$/.test(all.slice(newline + 1))) return newline === -1 ? '' : all.slice(0, newline);
    return all;
  }

  /** The head with the fence and the echo removed; null while they are still undecided. */
  private decideHead(final: boolean): string | null {
    let text = this.head;
    const trimmed = text.trimStart();
    if (trimmed.startsWith(fence)) {
      const newline = text.indexOf('\n');
      if (newline === -1) {
        if (!final) return null;
        text = '';
      } else text = text.slice(newline + 1);
    } else if (!final && fence.startsWith(trimmed)) return null;
    if (this.echo) {
      // Restated with or without its indentation.
      const body = text.trimStart();
      if (!final && body.length < this.echo.length && this.echo.startsWith(body)) return null;
      if (body.startsWith(this.echo)) text = body.slice(this.echo.length);
    }
    this.headDone = true;
    this.head = '';
    return text;
  }

  /** Holds back the last line while it could be a closing fence. */
  private holdTail(text: string): string {
    const all = this.tail + text;
    const newline = all.lastIndexOf('\n');
    if (/^\s*`{0,3}$/.test(all.slice(newline + 1))) {
      const cut = newline === -1 ? 0 : newline;
      this.tail = all.slice(cut);
      return all.slice(0, cut);
    }
    this.tail = '';
    return all;
  }
}
