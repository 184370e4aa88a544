import { JSONParser } from '@streamparser/json';

/**
 * The `patch` field of an apply_patch call's JSON arguments, decoded while the arguments stream
 * (the model writes `{"patch":"*** Begin Patch\n…`): each `push` returns the text of the field
 * that arrived, escapes decoded, so the patch reaches the files as it is written.
 */
export class PatchArgument {
  private readonly parser = new JSONParser({ paths: ['$.patch'], keepStack: false, emitPartialTokens: true, emitPartialValues: true });
  private emitted = 0;
  private out = '';
  private failure: string | null = null;

  constructor() {
    this.parser.onValue = ({ value }) => {
      if (typeof value !== 'string' || value.length <= this.emitted) return;
      this.out += value.slice(this.emitted);
      this.emitted = value.length;
    };
    this.parser.onError = (error) => {
      this.failure ??= error.message;
    };
  }

  /** Why the arguments are not JSON, once they are certain not to be. */
  get error(): string | null {
    return this.failure;
  }

  push(json: string): string {
    if (this.failure !== null || !json) return '';
    try {
      this.parser.write(json);
    } catch (error) {
      this.failure ??= (error as Error).message;
    }
    const out = this.out;
    this.out = '';
    return out;
  }
}

const begin = '*** Begin Patch';
const end = '*** End Patch';

/**
 * For models that do not call tools (the embedded demo model): they write patches in their
 * answer. Splits the answer as it streams into prose (shown in the thread) and patch text (sent
 * to a PatchStream), a line that starts a patch being recognised by its `*** Begin Patch`.
 * Prose is passed on at once unless its line could still become the patch's first line.
 */
export class TextPatchSplitter {
  private inPatch = false;
  /** The current line, when it is held (it may be the start of a patch marker). */
  private held = '';
  /** The current line's text inside a patch, to see `*** End Patch`. */
  private patchLine = '';
  /** Prose of the current line was passed on already: it cannot start a patch. */
  private midLine = false;

  push(text: string): { prose: string; patch: string; patchStarts: boolean; patchEnds: boolean } {
    let prose = '';
    let patch = '';
    let patchStarts = false;
    let patchEnds = false;
    let rest = this.held + text;
    this.held = '';
    while (rest) {
      if (this.inPatch) {
        const lineBreak = rest.indexOf('\n');
        const piece = lineBreak === -1 ? rest : rest.slice(0, lineBreak + 1);
        rest = rest.slice(piece.length);
        patch += piece;
        this.patchLine += piece;
        if (!piece.endsWith('\n')) break;
        const line = this.patchLine;
        this.patchLine = '';
        if (line.trim() === end) {
          this.inPatch = false;
          patchEnds = true;
        }
        continue;
      }
      const lineBreak = rest.indexOf('\n');
      const line = lineBreak === -1 ? rest : rest.slice(0, lineBreak + 1);
      if (this.midLine) {
        prose += line;
        rest = rest.slice(line.length);
        this.midLine = lineBreak === -1;
        continue;
      }
      if (line.trim() === begin && line.endsWith('\n')) {
        this.inPatch = true;
        patchStarts = true;
        patch += line;
        rest = rest.slice(line.length);
        continue;
      }
      if (lineBreak === -1 && begin.startsWith(line.trimStart()) && line.trim() !== '') {
        this.held = line;
        break;
      }
      prose += line;
      rest = rest.slice(line.length);
      this.midLine = lineBreak === -1;
    }
    return { prose, patch, patchStarts, patchEnds };
  }

  /** The end of the answer: a held line is prose after all. */
  finish(): string {
    const held = this.held;
    this.held = '';
    return held;
  }
}
