import { describePathError, normalizePath, validatePath } from '@flint/protocol';

export type FileKind = 'add' | 'delete' | 'update';

/** Why a patch was refused ([R6]); `message` says it in a sentence for the model or the user. */
export type PatchErrorCode =
  | 'missing_begin'
  | 'missing_end'
  | 'unknown_header'
  | 'bad_line'
  | 'bad_path'
  | 'empty_file'
  | 'empty_hunk';

/**
 * What a {@link PatchReader} reads from a patch, in order (grammar in SPEC.md [R3]).
 *
 * A hunk's old text is its `context` and `removed` lines; its new text is its `context` lines
 * and its `added` text, in the order they come. `added` text carries its line breaks and may
 * stop inside a line: the rest of that line comes in the next `added` event.
 * `line` numbers are 1-based lines of the patch; `offset` counts UTF-16 code units.
 */
export type PatchEvent =
  | { readonly type: 'file-start'; readonly kind: FileKind; readonly path: string; readonly moveTo?: string; readonly line: number }
  | { readonly type: 'hunk-start'; readonly header?: string; readonly line: number }
  | { readonly type: 'context'; readonly text: string }
  | { readonly type: 'removed'; readonly text: string }
  | { readonly type: 'added'; readonly text: string }
  | { readonly type: 'hunk-end'; readonly endOfFile: boolean }
  | { readonly type: 'file-end' }
  | { readonly type: 'end' }
  | { readonly type: 'error'; readonly code: PatchErrorCode; readonly message: string; readonly line: number; readonly offset: number };

type State = 'before' | 'files' | 'add' | 'update-head' | 'hunk' | 'after-eof' | 'done';

type Marker =
  | { readonly type: 'begin' | 'end' | 'eof' }
  | { readonly type: 'add' | 'delete' | 'update' | 'move'; readonly path: string };

const headerPattern = /^\*\*\* (Add File|Delete File|Update File|Move to):(.*)$/;
const headerTypes = { 'Add File': 'add', 'Delete File': 'delete', 'Update File': 'update', 'Move to': 'move' } as const;

function parseMarker(line: string): Marker | null {
  const text = line.trimEnd();
  if (text === '*** Begin Patch') return { type: 'begin' };
  if (text === '*** End Patch') return { type: 'end' };
  if (text === '*** End of File') return { type: 'eof' };
  const match = headerPattern.exec(text);
  return match ? { type: headerTypes[match[1] as keyof typeof headerTypes], path: match[2]!.trim() } : null;
}

function hunkHeader(line: string): { header: string | undefined } | null {
  const text = line.trimEnd();
  if (text === '@@') return { header: undefined };
  return line.startsWith('@@ ') ? { header: text.slice(3) } : null;
}

const isBlank = (line: string) => line.trim() === '';
const quote = (line: string) => JSON.stringify(line.length > 60 ? `${line.slice(0, 60)}…` : line);
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * Reads a patch in the V4A (`apply_patch`) format as the model writes it, chunk by chunk, and
 * says what it edits as soon as each part is certain, so an editor can show added lines while
 * they are typed. Events are never retracted; a malformed patch ends in one `error` event.
 *
 * @example
 * const reader = new PatchReader();
 * for await (const chunk of modelOutput) for (const event of reader.push(chunk)) engine.handle(event);
 * for (const event of reader.finish()) engine.handle(event);
 */
export class PatchReader {
  #state: State = 'before';
  #out: PatchEvent[] = [];
  /** The line being received, without its line break. */
  #line = '';
  #lineStart = 0;
  #lineNumber = 1;
  /** Whether the current line is an added line, and how much of it past the '+' was emitted. */
  #added = false;
  #sent = 0;
  /** An Update File whose `file-start` waits for its first hunk: a Move to may still come. */
  #update: { path: string; moveTo?: string; line: number } | null = null;
  #hunkLines = 0;
  #finished = false;

  /** Reads the next chunk of the patch; returns the events it made certain. */
  push(text: string): PatchEvent[] {
    if (this.#finished) throw new Error('PatchReader.push() called after finish()');
    let from = 0;
    while (this.#state !== 'done') {
      const lineBreak = text.indexOf('\n', from);
      if (lineBreak === -1) {
        this.#line += text.slice(from);
        this.#streamAdded(false);
        break;
      }
      this.#line += text.slice(from, lineBreak);
      this.#endLine();
      from = lineBreak + 1;
    }
    return this.#take();
  }

  /** Ends the input: a patch must have ended with `*** End Patch` by now ([R7]). */
  finish(): PatchEvent[] {
    if (this.#finished) throw new Error('PatchReader.finish() called twice');
    this.#finished = true;
    // The last line may lack its line break; only the markers that emit no edit are read without one.
    const last = this.#added ? null : parseMarker(this.#line);
    if (last?.type === 'end' || last?.type === 'begin') this.#readLine(this.#line);
    if (this.#state === 'before') {
      const what = isBlank(this.#line) ? 'The patch is empty' : `The patch stops at ${quote(this.#line)}`;
      this.#fail('missing_begin', `${what}: it must start with "*** Begin Patch".`, this.#lineStart + this.#line.length);
    } else if (this.#state !== 'done') {
      const where = this.#line === '' ? `after line ${this.#lineNumber - 1}` : `in the middle of line ${this.#lineNumber}`;
      this.#fail('missing_end', `The patch stops ${where} without "*** End Patch": it was cut off.`, this.#lineStart + this.#line.length);
    }
    return this.#take();
  }

  #take(): PatchEvent[] {
    const out = this.#out;
    this.#out = [];
    return out;
  }

  #emit(event: PatchEvent): void {
    this.#out.push(event);
  }

  #acceptsAdded(): boolean {
    return this.#state === 'add' || this.#state === 'update-head' || this.#state === 'hunk';
  }

  /** Emits what arrived of an added line; decided by its '+' alone, so it streams ([R4]). */
  #streamAdded(lineEnded: boolean): void {
    if (!this.#added) {
      if (!this.#line.startsWith('+') || !this.#acceptsAdded()) return;
      if (this.#state === 'update-head') this.#openHunk(undefined);
      this.#hunkLines += 1;
      this.#added = true;
    }
    let end = this.#line.length;
    // Half of a surrogate pair waits for its other half, so no event splits a character.
    if (!lineEnded && end > 1 && isHighSurrogate(this.#line.charCodeAt(end - 1))) end -= 1;
    const text = this.#line.slice(1 + this.#sent, end) + (lineEnded ? '\n' : '');
    this.#sent = end - 1;
    if (text !== '') this.#emit({ type: 'added', text });
  }

  #endLine(): void {
    this.#streamAdded(true);
    if (!this.#added) this.#readLine(this.#line);
    this.#lineStart += this.#line.length + 1;
    this.#lineNumber += 1;
    this.#line = '';
    this.#added = false;
    this.#sent = 0;
  }

  /** Reads a whole line that is not an added line. */
  #readLine(line: string): void {
    switch (this.#state) {
      case 'before':
        if (isBlank(line)) return;
        if (parseMarker(line)?.type === 'begin') this.#state = 'files';
        else this.#fail('missing_begin', `A patch must start with "*** Begin Patch", not ${quote(line)}.`);
        return;
      case 'files':
        if (!isBlank(line)) this.#nextFile(line, 'Expected "*** Add File: ", "*** Delete File: ", "*** Update File: " or "*** End Patch"');
        return;
      case 'add':
        this.#nextFile(line, 'Every line of an added file starts with "+"');
        return;
      case 'update-head':
        return this.#readUpdateHead(line);
      case 'hunk':
        return this.#readHunkLine(line);
      case 'after-eof': {
        if (isBlank(line)) return;
        const hunk = hunkHeader(line);
        if (hunk) this.#openHunk(hunk.header);
        else this.#nextFile(line, 'After "*** End of File" comes "@@" or the next file');
        return;
      }
      case 'done':
        return;
    }
  }

  #readUpdateHead(line: string): void {
    const update = this.#update!;
    const hunk = hunkHeader(line);
    if (hunk) return this.#openHunk(hunk.header);
    if (line.startsWith(' ') || line.startsWith('-')) {
      // The first hunk of a file may omit its "@@" line (as Codex allows).
      this.#openHunk(undefined);
      return this.#readHunkLine(line);
    }
    if (isBlank(line)) return;
    const marker = line.startsWith('***') ? parseMarker(line) : null;
    if (marker?.type === 'move' && update.moveTo === undefined && update.line === this.#lineNumber - 1) {
      const moveTo = this.#checkPath(marker.path);
      if (moveTo !== null) update.moveTo = moveTo;
    } else if (marker?.type === 'move') {
      this.#fail('unknown_header', `"*** Move to: " must come right after "*** Update File: ", once.`);
    } else if (line.startsWith('***')) {
      this.#fail('empty_file', `"*** Update File: ${update.path}" has no hunk: an update needs at least one "@@" hunk.`);
    } else {
      this.#fail('bad_line', `Expected "@@" or a hunk line after "*** Update File: ${update.path}", not ${quote(line)}.`);
    }
  }

  #readHunkLine(line: string): void {
    if (line.startsWith(' ') || isBlank(line)) {
      // A blank line in a hunk is an empty context line whose space prefix was trimmed away.
      this.#hunkLines += 1;
      return this.#emit({ type: 'context', text: line.startsWith(' ') ? line.slice(1) : '' });
    }
    if (line.startsWith('-')) {
      this.#hunkLines += 1;
      return this.#emit({ type: 'removed', text: line.slice(1) });
    }
    const hunk = hunkHeader(line);
    if (hunk) {
      if (!this.#hunkHasLines()) return;
      this.#emit({ type: 'hunk-end', endOfFile: false });
      return this.#openHunk(hunk.header);
    }
    if (parseMarker(line)?.type === 'eof') {
      if (!this.#hunkHasLines()) return;
      this.#emit({ type: 'hunk-end', endOfFile: true });
      this.#state = 'after-eof';
      return;
    }
    this.#nextFile(line, 'Every line of a hunk starts with " " (context), "-" (removed) or "+" (added)');
  }

  #hunkHasLines(): boolean {
    if (this.#hunkLines === 0) this.#fail('empty_hunk', 'A hunk must have at least one line: this one ends before any.');
    return this.#hunkLines > 0;
  }

  #openHunk(header: string | undefined): void {
    const update = this.#update!;
    if (this.#state === 'update-head') {
      const { path, moveTo, line } = update;
      this.#emit(moveTo === undefined ? { type: 'file-start', kind: 'update', path, line } : { type: 'file-start', kind: 'update', path, moveTo, line });
    }
    this.#emit(header === undefined ? { type: 'hunk-start', line: this.#lineNumber } : { type: 'hunk-start', header, line: this.#lineNumber });
    this.#state = 'hunk';
    this.#hunkLines = 0;
  }

  /** A line that must start the next file or end the patch; `expected` says what else fits here. */
  #nextFile(line: string, expected: string): void {
    if (!line.startsWith('***')) return this.#fail('bad_line', `${expected}; got ${quote(line)}.`);
    if (this.#state === 'hunk' && !this.#hunkHasLines()) return;
    const marker = parseMarker(line);
    if (marker === null || marker.type === 'begin' || marker.type === 'eof' || marker.type === 'move') {
      const known = marker === null ? 'is not a patch header' : 'cannot come here';
      return this.#fail('unknown_header', `${quote(line)} ${known}: expected "*** Add File: ", "*** Delete File: ", "*** Update File: " or "*** End Patch".`);
    }
    const path = 'path' in marker ? this.#checkPath(marker.path) : '';
    if (path === null) return;
    // Validated first, so an error never follows the end of a file it did not belong to ([R6]).
    if (this.#state === 'add' || this.#state === 'hunk') this.#emit({ type: 'hunk-end', endOfFile: false });
    if (this.#state !== 'files') this.#emit({ type: 'file-end' });
    const at = this.#lineNumber;
    switch (marker.type) {
      case 'end':
        this.#emit({ type: 'end' });
        this.#state = 'done';
        return;
      case 'add':
        this.#emit({ type: 'file-start', kind: 'add', path, line: at });
        this.#emit({ type: 'hunk-start', line: at });
        this.#state = 'add';
        return;
      case 'delete':
        this.#emit({ type: 'file-start', kind: 'delete', path, line: at });
        this.#emit({ type: 'file-end' });
        this.#state = 'files';
        return;
      case 'update':
        this.#update = { path, line: at };
        this.#state = 'update-head';
        return;
    }
  }

  /** The path as the workspace stores it (NFC), or null after failing on it ([R8]). */
  #checkPath(raw: string): string | null {
    const path = normalizePath(raw);
    const problem = validatePath(path);
    if (problem === null) return path;
    this.#fail('bad_path', `Line ${this.#lineNumber} names the path ${quote(raw)}: ${describePathError(problem)}`);
    return null;
  }

  #fail(code: PatchErrorCode, message: string, offset = this.#lineStart): void {
    const text = code === 'bad_path' || code === 'missing_end' ? message : `Line ${this.#lineNumber}: ${message}`;
    this.#emit({ type: 'error', code, message: text, line: this.#lineNumber, offset });
    this.#state = 'done';
  }
}
