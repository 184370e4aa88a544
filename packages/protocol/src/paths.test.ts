import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describePathError, normalizePath, validatePath, type PathError } from './paths';

const runs = propertyParameters(1000);

/** Every error once; a new `PathError` fails to type-check here until it is listed. */
const everyError: Record<PathError, true> = {
  empty: true,
  too_long: true,
  absolute: true,
  traversal: true,
  empty_segment: true,
  control_character: true,
  bidi_control: true,
  lone_surrogate: true,
  backslash: true,
  segment_too_long: true,
};

const utf8 = { encode: (s: string) => new TextEncoder().encode(s), decode: (b: Uint8Array) => new TextDecoder().decode(b) };

describe('paths', () => {
  it('[P14] accepts names in any script, emoji (a surrogate pair) included', () => {
    for (const path of ['a.ts', 'ünïcode/名前.ts', 'تقرير.md', 'emoji \u{1F600}.ts', 'a\u{10FFFF}']) {
      expect(validatePath(path), path).toBeNull();
    }
  });

  it('[P14] refuses an unpaired surrogate, high or low, anywhere in the path', () => {
    for (const path of ['\ud800', 'a\ud800', 'a\ud800b.ts', '\udfffa', 'src/\ud83d.ts', 'x\ude00\ud83d']) {
      expect(validatePath(path), JSON.stringify(path)).toBe('lone_surrogate');
    }
  });

  it('[P14] refuses every C0 control, DEL and every C1 control', () => {
    const controls = [...range(0x00, 0x1f), 0x7f, ...range(0x80, 0x9f)];
    for (const code of controls) expect(validatePath(`a${String.fromCharCode(code)}b`), code.toString(16)).toBe('control_character');
  });

  it('[P14] refuses bidirectional marks, embeddings, overrides and isolates', () => {
    const bidi = [0x061c, 0x200e, 0x200f, ...range(0x202a, 0x202e), ...range(0x2066, 0x2069)];
    for (const code of bidi) expect(validatePath(`evil${String.fromCharCode(code)}exe.ts`), code.toString(16)).toBe('bidi_control');
    // Their neighbours are ordinary characters.
    for (const code of [0x061b, 0x200d, 0x202f, 0x2065]) expect(validatePath(`a${String.fromCharCode(code)}b`), code.toString(16)).toBeNull();
  });

  it('[P14] normalizes to NFC: the precomposed and the decomposed spelling are one path', () => {
    const nfd = 'cafe\u0301/A\u030angstro\u0308m.ts';
    const nfc = 'caf\u00e9/\u00c5ngstr\u00f6m.ts';
    expect(normalizePath(nfd)).toBe(nfc);
    expect(normalizePath(nfc)).toBe(nfc);
    expect(normalizePath('\u212b.ts')).toBe('\u00c5.ts'); // the Ångström sign is the letter Å
  });

  it('[P14] every refusal has a sentence for the user', () => {
    for (const error of Object.keys(everyError) as PathError[]) expect(describePathError(error)).toMatch(/^[A-Z].+\.$/);
  });

  it('[P14] any string is refused, or is a path that survives the wire and looks like what it is', () => {
    fc.assert(
      fc.property(codeUnits, (raw) => {
        const path = normalizePath(raw);
        const error = validatePath(path);
        if (error !== null) {
          expect(Object.keys(everyError)).toContain(error);
          return;
        }
        // What Yjs and JSON carry is UTF-8: an accepted path reaches every client unchanged.
        expect(utf8.decode(utf8.encode(path))).toBe(path);
        expect(normalizePath(path)).toBe(path);
        expect(path).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\\]/);
        expect(path.split('/')).not.toContain('..');
      }),
      runs,
    );
  });

  it('[P14] the generator of that property also produces acceptable paths', () => {
    const accepted = fc.sample(codeUnits, { seed: runs.seed, numRuns: runs.numRuns }).filter((raw) => validatePath(normalizePath(raw)) === null);
    expect(accepted.length).toBeGreaterThan(runs.numRuns / 10);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * 0–16 UTF-16 code units, drawn mostly from what paths are made of and sometimes from anywhere
 * in 0x0000–0xFFFF (so surrogate halves, controls and marks turn up on their own).
 */
const codeUnits: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { arbitrary: fc.constantFrom(...'ab/._- é名\u0301'), weight: 7 },
      { arbitrary: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), weight: 3 },
    ),
    { maxLength: 16, size: 'max' },
  )
  .map((units) => units.join(''));
