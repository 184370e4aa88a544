/**
 * Models asked for bare code still sometimes wrap it in a markdown fence. This drops an opening
 * fence line at the very start and a closing fence at the very end, streaming: it holds back
 * only the text that could still turn out to be a fence.
 */
export class CodeFenceFilter {
  private head = '';
  private headDone = false;
  private tail = '';

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
    // Hold back the last line while it could be a closing fence.
    const all = this.tail + text;
    const newline = all.lastIndexOf('\n');
    const lastLine = all.slice(newline + 1);
    if (newline !== -1 && /^\s*`{0,3}\s*$/.test(lastLine)) {
      this.tail = all.slice(newline);
      return all.slice(0, newline);
    }
    this.tail = '';
    return all;
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
