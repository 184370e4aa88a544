import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PatchArgument, TextPatchSplitter } from './patchSources';

const patch = '*** Begin Patch\n*** Update File: a.ts\n@@\n-"old" \\ é 😀\n+new\n*** End Patch\n';

function chunked(text: string, cuts: number[]): string[] {
  const points = [...new Set([0, ...cuts.map((cut) => cut % (text.length + 1)), text.length])].sort((a, b) => a - b);
  return points.slice(1).map((end, i) => text.slice(points[i], end));
}

describe('PatchArgument', () => {
  it('decodes the patch field of streamed JSON arguments, for any chunking (seeded)', () => {
    const json = JSON.stringify({ patch });
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 30 }), (cuts) => {
        const argument = new PatchArgument();
        const out = chunked(json, cuts).map((chunk) => argument.push(chunk)).join('');
        expect(out).toBe(patch);
        expect(argument.error).toBeNull();
      }),
      propertyParameters(300),
    );
  });

  it('passes text on before the string ends', () => {
    const argument = new PatchArgument();
    expect(argument.push('{"patch": "*** Begin Patch\\n+ha')).toBe('*** Begin Patch\n+ha');
    expect(argument.push('lf"}')).toBe('lf');
  });

  it('says when the arguments are not JSON', () => {
    const argument = new PatchArgument();
    argument.push('{patch: nope}');
    expect(argument.error).toMatch(/./);
  });
});

describe('TextPatchSplitter', () => {
  const answer = `I will add it.\n${patch}Done. * not a marker\n`;

  it('splits prose from the patch, for any chunking (seeded)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 30 }), (cuts) => {
        const splitter = new TextPatchSplitter();
        let prose = '';
        let text = '';
        let starts = 0;
        let ends = 0;
        for (const chunk of chunked(answer, cuts)) {
          const part = splitter.push(chunk);
          prose += part.prose;
          text += part.patch;
          starts += Number(part.patchStarts);
          ends += Number(part.patchEnds);
        }
        prose += splitter.finish();
        expect(prose).toBe('I will add it.\nDone. * not a marker\n');
        expect(text).toBe(patch);
        expect([starts, ends]).toEqual([1, 1]);
      }),
      propertyParameters(300),
    );
  });

  it('passes prose on at once, unless its line may start a patch', () => {
    const splitter = new TextPatchSplitter();
    expect(splitter.push('Hello').prose).toBe('Hello');
    expect(splitter.push(' *** Begin Patch').prose).toBe(' *** Begin Patch');
    expect(splitter.push('\n*** Beg').prose).toBe('\n');
    expect(splitter.finish()).toBe('*** Beg');
  });
});
