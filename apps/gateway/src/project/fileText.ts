import { isUtf8 } from 'node:buffer';
import { diff3Merge, diffPatch } from 'node-diff3';
import type * as Y from 'yjs';

/** How a text file is spelled on disk, kept so a write gives it back the same way. */
export interface TextFormat {
  bom: boolean;
  crlf: boolean;
  /** Some lines end CRLF and others LF: a write keeps each unchanged line's own ending (`encodeLike`). */
  mixed?: boolean;
}

/** Files past this many bytes stay on disk as binary: they are not opened as text. */
export const maxTextBytes = 1024 * 1024;
/**
 * A file that already has a document keeps syncing up to this size (a document's own limit):
 * people who typed it past `maxTextBytes` must not see it turn binary under them.
 */
export const maxSyncedTextBytes = 8 * 1024 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const bomBytes = [0xef, 0xbb, 0xbf];

/**
 * The text of a file's bytes, and how it is spelled; null when it is not text we edit (a NUL in
 * its first 8 KB, invalid UTF-8, or larger than `maxBytes`).
 */
export function decodeText(bytes: Uint8Array, maxBytes = maxTextBytes): { text: string; format: TextFormat } | null {
  if (bytes.byteLength > maxBytes || bytes.subarray(0, 8192).includes(0)) return null;
  const bom = bomBytes.every((byte, i) => bytes[i] === byte);
  let text: string;
  try {
    text = utf8.decode(bom ? bytes.subarray(3) : bytes);
  } catch {
    return null;
  }
  // A file is CRLF when most of its line breaks are: the editor works in LF, writes give CRLF back.
  const crlfCount = text.split('\r\n').length - 1;
  const lfCount = text.split('\n').length - 1;
  const crlf = crlfCount > 0 && crlfCount * 2 >= lfCount;
  const mixed = crlfCount > 0 && crlfCount < lfCount;
  return { text: crlf ? text.replace(/\r\n/g, '\n') : text, format: mixed && crlf ? { bom, crlf, mixed } : { bom, crlf } };
}

/** Whether `decodeText` would take these bytes as text, without decoding them (a folder's listing reads thousands). */
export function isText(bytes: Uint8Array, maxBytes = maxTextBytes): boolean {
  if (bytes.byteLength > maxBytes || bytes.subarray(0, 8192).includes(0)) return false;
  const bom = bomBytes.every((byte, i) => bytes[i] === byte);
  return isUtf8(bom ? bytes.subarray(3) : bytes);
}

export function encodeText(text: string, format: TextFormat): Uint8Array {
  const body = new TextEncoder().encode(format.crlf ? text.replace(/\n/g, '\r\n') : text);
  if (!format.bom) return body;
  const out = new Uint8Array(body.byteLength + 3);
  out.set(bomBytes, 0);
  out.set(body, 3);
  return out;
}

/**
 * `text` (LF, as the document holds it) spelled like `previous`, the file's bytes now: every line
 * the edit left alone keeps its own line ending, new and changed lines get the file's usual one
 * (`format.crlf`). For a file of mixed line endings, which `encodeText` would make all CRLF.
 */
export function encodeLike(text: string, format: TextFormat, previous: Uint8Array | null): Uint8Array {
  const decoded = previous ? decodeText(previous) : null;
  if (!decoded || !previous) return encodeText(text, format);
  const raw = utf8.decode(decoded.format.bom ? previous.subarray(3) : previous);
  const rawLines = raw.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const oldLines = rawLines.map((line) => line.replace(/\r\n$/, '\n'));
  const newLines = lines(text);
  const usual = format.crlf ? '\r\n' : '\n';
  const spelled = (line: string) => (line.endsWith('\n') ? line.slice(0, -1) + usual : line);
  const out: string[] = [];
  let at = 0;
  for (const { buffer1, buffer2 } of diffPatch(oldLines, newLines)) {
    for (; at < buffer1.offset; at++) out.push(rawLines[at]!);
    out.push(...buffer2.chunk.map(spelled));
    at = buffer1.offset + buffer1.length;
  }
  for (; at < rawLines.length; at++) out.push(rawLines[at]!);
  return encodeText(out.join(''), { bom: format.bom, crlf: false });
}

/** Lines with their line breaks, so joining them gives the text back exactly. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * Three-way merge, line by line, of what the document and the disk each did since `base` (the
 * text both last agreed on). Where both changed the same lines, the document wins: it is the
 * truth while people are in the room (issue 24), and nobody's typing is lost.
 */
export function mergeText(doc: string, base: string, disk: string): string {
  if (doc === base) return disk;
  if (disk === base || disk === doc) return doc;
  return diff3Merge(lines(doc), lines(base), lines(disk), { excludeFalseConflicts: true })
    .map((region) => (region.ok ?? region.conflict!.a).join(''))
    .join('');
}

/**
 * How alike two texts are, 0 to 1: the lines they share (repeats counted) over the line count of
 * the longer. Pairs a file deleted on disk with one created in its place under another name and
 * changed meanwhile (git's rename detection asks the same, by bytes, at 50%).
 */
export function lineSimilarity(a: string, b: string): number {
  const left = lines(a);
  const right = lines(b);
  const longest = Math.max(left.length, right.length);
  if (longest === 0) return 1;
  const counts = new Map<string, number>();
  for (const line of left) counts.set(line, (counts.get(line) ?? 0) + 1);
  let common = 0;
  for (const line of right) {
    const count = counts.get(line) ?? 0;
    if (count === 0) continue;
    common++;
    counts.set(line, count - 1);
  }
  return common / longest;
}

/**
 * Turns `text` into `target` with line-sized edits (unchanged lines are not touched, so people's
 * cursors and the agent's hunks on them stay), last edit first so offsets hold.
 */
export function applyText(text: Y.Text, target: string): void {
  const current = text.toString();
  if (current === target) return;
  const from = lines(current);
  const starts: number[] = [];
  let at = 0;
  for (const line of from) {
    starts.push(at);
    at += line.length;
  }
  starts.push(at);
  const patches = diffPatch(from, lines(target));
  for (let i = patches.length - 1; i >= 0; i--) {
    const { buffer1, buffer2 } = patches[i]!;
    const start = starts[buffer1.offset]!;
    const end = starts[buffer1.offset + buffer1.length]!;
    if (end > start) text.delete(start, end - start);
    const insert = buffer2.chunk.join('');
    if (insert) text.insert(start, insert);
  }
}
