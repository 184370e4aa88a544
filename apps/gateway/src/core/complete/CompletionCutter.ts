/**
 * Decides, while the model streams, where a suggestion ends — so the gateway can stop the
 * provider at once instead of paying for text nobody will see. Forward-only: text it released
 * is never taken back, and the final suggestion (after `postProcess`) is a prefix of it.
 *
 * - One line when the cursor is mid-line: the suggestion ends at the first newline.
 * - A block otherwise: each later line is judged once it is complete, and the suggestion ends
 *   before a blank line, before a line that dedents past the cursor line's indent, before a
 *   line that repeats the next line of the file, or after `maxLines`.
 *
 * Lines after the first are held back until judged; the first line streams as it comes.
 */
import type { SuggestionShape } from './completionPrompt';

const leadingSpace = (line: string) => /^[ \t]*/.exec(line)![0].length;

export class CompletionCutter {
  private raw = '';
  private released = 0;
  /** Where the line being received starts in `raw` (after its newline). */
  private lineStart = 0;
  private lineIndex = 0;
  private scanFrom = 0;
  private stopped = false;

  constructor(
    private readonly shape: SuggestionShape,
    private readonly maxChars = 4000,
  ) {}

  /** Whether the suggestion is complete: the provider can be stopped. */
  get done(): boolean {
    return this.stopped;
  }

  /** The suggestion so far (cut, once `done`). */
  get text(): string {
    return this.raw;
  }

  /** Adds model text; returns the newly settled text to stream to the client. */
  push(chunk: string): string {
    if (this.stopped || chunk === '') return '';
    this.raw += chunk;
    for (let newline = this.raw.indexOf('\n', this.scanFrom); newline !== -1 && !this.stopped; newline = this.raw.indexOf('\n', this.scanFrom)) {
      this.scanFrom = newline + 1;
      this.lineEnded(newline);
    }
    if (!this.stopped && this.raw.length >= this.maxChars) this.cut(this.maxChars);
    return this.release();
  }

  /** The provider finished: judges the last line; returns what is left to stream. */
  finish(): string {
    if (!this.stopped && this.lineIndex > 0) {
      const line = this.raw.slice(this.lineStart);
      // A trailing newline before a rest-of-line (`{|}`) puts that rest on its own line: keep it.
      const keepEmpty = line === '' && this.shape.lineSuffix.trim() !== '';
      if (!keepEmpty) this.judge(line);
    }
    this.stopped = true;
    return this.release(true);
  }

  private lineEnded(newline: number): void {
    if (this.lineIndex === 0) {
      if (this.shape.singleLine) return this.cut(newline);
    } else {
      this.judge(this.raw.slice(this.lineStart, newline));
      if (this.stopped) return;
    }
    this.lineIndex++;
    this.lineStart = newline + 1;
    if (this.lineIndex >= this.shape.maxLines) this.cut(newline);
  }

  /** Ends the suggestion before `line` (the current line) when it should not be part of it. */
  private judge(line: string): void {
    const before = this.lineStart - 1;
    const content = line.trim();
    if (content === '') return this.cut(before);
    if (leadingSpace(line) < this.shape.baseIndent) return this.cut(before);
    if (content === this.shape.nextSuffixLine) {
      // The rest of the cursor line follows the suggestion: leave it a fresh, indented line.
      if (this.shape.nextSuffixOnCursorLine) return this.cut(this.lineStart + leadingSpace(line));
      return this.cut(before);
    }
  }

  private cut(at: number): void {
    this.raw = this.raw.slice(0, Math.max(this.released, at));
    this.stopped = true;
  }

  private release(all = false): string {
    // The line being received is held back until judged; the first line streams as it comes.
    const settled = this.stopped || all || this.lineIndex === 0 ? this.raw.length : this.lineStart - 1;
    if (settled <= this.released) return '';
    const text = this.raw.slice(this.released, settled);
    this.released = settled;
    return text;
  }
}
