import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { applyText, decodeText, encodeText, lineSimilarity, mergeText } from './fileText';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('file text', () => {
  it('says how alike two texts are by their shared lines, repeats counted', () => {
    expect(lineSimilarity('', '')).toBe(1);
    expect(lineSimilarity('a\nb\n', 'a\nb\n')).toBe(1);
    expect(lineSimilarity('a\nb\nc\nd\n', 'a\nb\nc\nD\n')).toBe(0.75);
    expect(lineSimilarity('a\na\n', 'a\nb\n')).toBe(0.5);
    expect(lineSimilarity('a\n', 'a\nb\nc\nd\n')).toBe(0.25);
    expect(lineSimilarity('x\n', '')).toBe(0);
  });

  it('decodes text and gives it back spelled the same: BOM, CRLF', () => {
    for (const raw of ['a\nb\n', 'a\r\nb\r\n', '\ufeffx\r\ny', 'no break', '']) {
      const file = bytes(raw);
      const decoded = decodeText(file)!;
      expect(decoded.text).not.toContain('\r\n');
      expect(encodeText(decoded.text, decoded.format)).toEqual(file);
    }
  });

  it('does not open binary, invalid UTF-8 or huge files as text', () => {
    expect(decodeText(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1]))).toBeNull();
    expect(decodeText(new Uint8Array([0xff, 0xfe, 0x41]))).toBeNull();
    expect(decodeText(new Uint8Array(2 * 1024 * 1024).fill(0x41))).toBeNull();
  });

  it('merges the disk’s change with the document’s; the document wins where both changed a line', () => {
    const base = 'one\ntwo\nthree\n';
    expect(mergeText('ONE\ntwo\nthree\n', base, 'one\ntwo\nTHREE\n')).toBe('ONE\ntwo\nTHREE\n');
    expect(mergeText('one\nTwo!\nthree\n', base, 'one\ntwo?\nthree\n')).toBe('one\nTwo!\nthree\n');
    expect(mergeText(base, base, 'new\n')).toBe('new\n');
    expect(mergeText('typed\n', base, base)).toBe('typed\n');
  });

  it('applies a target text with line edits, leaving unchanged lines alone (seeded)', () => {
    const line = fc.constantFrom('a\n', 'b\n', 'c\n', 'dd', '\n', 'e\n');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(line, { maxLength: 12 }), (from, to) => {
        const doc = new Y.Doc();
        const text = doc.getText('content');
        text.insert(0, from.join(''));
        applyText(text, to.join(''));
        expect(text.toString()).toBe(to.join(''));
      }),
      propertyParameters(300),
    );
  });

  it('keeps a character id on a line the change does not touch', () => {
    const doc = new Y.Doc();
    const text = doc.getText('content');
    text.insert(0, 'keep\nchange\n');
    const kept = Y.createRelativePositionFromTypeIndex(text, 2);
    applyText(text, 'keep\nchanged\nmore\n');
    expect(Y.createAbsolutePositionFromRelativePosition(kept, doc)?.index).toBe(2);
  });
});
