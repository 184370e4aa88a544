/** The end of an answer that a closing fence could still follow or be: `\n`, blanks, ``` so far. */
const closingFenceSoFar = /\n\s*(?:`{1,3}\s*)?$/;
/** Blank lines past this are text, fence or not: holding them would hold the stream. */
const maxHeld = 256;

/**
 * Models asked for bare code still sometimes wrap it in a markdown fence. This drops an opening
 * fence line at the very start and a closing fence at the very end, streaming: it holds back
 * only the text that could still turn out to be a fence.
 */
export class CodeFenceFilter {
  private head = '';
  private headDone = false;
  private tail = '';
  /** Whether any text has gone out. */
  private released = false;

  push(chunk: string): string {
    let text = chunk;
    if (!this.headDone) {
      this.head += text;
      // Only a fence at the very start counts: holding leading indentation to look past it
      // would delay the first visible token of most rewrites.
      const probe = this.head;
      if (probe.length < 3 && '```'.startsWith(probe)) return '';
      if (probe.startsWith('```')) {
        const newline = this.head.indexOf('\n');
        if (newline === -1) return '';
        text = this.head.slice(newline + 1);
      } else text = this.head;
      this.headDone = true;
      this.head = '';
    }
    // Hold back the end while it could still become a closing fence (a newline, blank lines, up
    // to three backticks) — but not blank lines before anything went out: a rewrite that opens
    // with a blank line shows it with its first token, and an answer that is blank lines and a
    // fence (no code) leaves only those blank lines.
    const all = this.tail + text;
    const couldClose = !this.released && /^\s*$/.test(all) ? null : closingFenceSoFar.exec(all);
    const cut = couldClose && all.length - couldClose.index <= maxHeld ? couldClose.index : all.length;
    this.tail = all.slice(cut);
    const out = all.slice(0, cut);
    if (out) this.released = true;
    return out;
  }

  /** The held-back text, unless it was a closing fence. */
  finish(): string {
    const rest = this.headDone ? this.tail : this.head;
    this.tail = '';
    this.head = '';
    if (/^\n?\s*```\s*$/.test(rest)) return '';
    return rest;
  }
}
