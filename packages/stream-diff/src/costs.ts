/** Alignment states: the op that produced a cell. Two bits each in the traceback bytes. */
export const KEEP = 0;
export const INS = 1;
export const DEL = 2;

export const LF = 10;

// Costs of a character edit inside a changed line ([D5]), in eighths of an inserted character.
// Opening a gap is dear so that scattered coincidences of a few characters are not kept;
// junctions price where a gap starts or ends, so that whole words are kept or replaced.
export const C_INS = 8;
export const C_DEL = 2;
export const C_GAP = 40;
const J_WORD = 8;
const J_MID = 32;
const J_INDENT = 64;

export const isBlank = (c: number): boolean => c === 32 || c === 9;

const isWord = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c > 127;

/**
 * Price of a gap boundary between the new-text code points `prev` and `next`; `blank` says the
 * line is blank up to the boundary. Free at a line start, dear inside indentation or a word.
 */
export function junction(prev: number, blank: number, next: number): number {
  if (prev === LF) return 0;
  if (blank) return J_INDENT;
  return isWord(prev) && isWord(next) ? J_MID : J_WORD;
}
