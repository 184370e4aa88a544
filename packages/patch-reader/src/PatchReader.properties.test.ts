import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPatchToText, collectFileChanges, type PatchEvent } from './index';
import {
  applyEventsLive,
  chunking,
  chunksOf,
  generatedPatch,
  grammarProblem,
  isPrefixStream,
  merged,
  readAll,
  type GeneratedPatch,
} from './testPatches';

const runs = propertyParameters(200);

const fail = (why: string): never => {
  throw new Error(why);
};

const originalsOf = (patch: GeneratedPatch) => new Map(patch.files.map((file) => [file.path, file.original]));

/** A line that is wrong wherever it stands before `*** End Patch`, with the error it may give. */
const badLine = fc.constantFrom('x', 'oops not a hunk line', '*** Bogus: a', '*** Add File: /etc/passwd', '*** Update File: ../up', '@@@');

/** A valid patch broken somewhere before its end: cut off, or a bad line put in. */
const brokenPatch = fc
  .tuple(generatedPatch, fc.nat(), badLine, fc.boolean())
  .map(([patch, where, bad, cut]) => {
    const endLine = patch.text.lastIndexOf('*** End Patch');
    if (cut) {
      const at = where % (endLine + '*** End Patch'.length);
      return { text: patch.text.slice(0, at), errorAt: at };
    }
    const lineStarts = [0, ...patch.text.slice(0, endLine).split('').flatMap((unit, i) => (unit === '\n' ? [i + 1] : []))];
    const at = lineStarts[where % lineStarts.length]!;
    return { text: `${patch.text.slice(0, at)}${bad}\n${patch.text.slice(at)}`, errorAt: at };
  });

describe('PatchReader — properties', () => {
  it('[R3][R5] for generated patches, any chunking gives the same well-ordered events', () => {
    fc.assert(
      fc.property(generatedPatch, chunking, (patch, sizes) => {
        const whole = merged(readAll([patch.text]));
        const chunked = merged(readAll(chunksOf(patch.text, sizes)));
        expect(chunked).toEqual(whole);
        const problem = grammarProblem(whole);
        if (problem !== null) fail(`[R3] ${problem}`);
        if (whole.at(-1)?.type !== 'end') fail(`[R3] a valid patch ends with ${JSON.stringify(whole.at(-1))}`);
      }),
      runs,
    );
  });

  it('[R5] the same holds one code unit at a time, with empty chunks between', () => {
    fc.assert(
      fc.property(generatedPatch, (patch) => {
        const units = patch.text.split('').flatMap((unit) => ['', unit]);
        expect(merged(readAll(units))).toEqual(merged(readAll([patch.text])));
      }),
      propertyParameters(60),
    );
  });

  it('[R3][R9][R13] applying by the events, live, and applyPatchToText both give the intended text', () => {
    fc.assert(
      fc.property(generatedPatch, chunking, (patch, sizes) => {
        const events = readAll(chunksOf(patch.text, sizes));
        const live = applyEventsLive(originalsOf(patch), events);
        if (typeof live === 'string') return fail(`live apply failed: ${live}`);
        const changes = collectFileChanges(events);
        expect(changes.map((change) => change.path)).toEqual(patch.files.map((file) => file.path));
        for (const [i, file] of patch.files.entries()) {
          expect(live.get(file.moveTo ?? file.path)).toEqual(file.expected);
          expect(applyPatchToText(file.original, changes[i]!)).toEqual({ ok: true, text: file.expected });
          expect(changes[i]!.moveTo).toEqual(file.moveTo);
        }
      }),
      runs,
    );
  });

  it('[R4] events are never retracted: what any prefix of the patch gives is where the whole patch stood', () => {
    fc.assert(
      fc.property(generatedPatch, fc.nat(), (patch, where) => {
        const cut = where % (patch.text.length + 1);
        const early = merged(readAll([patch.text.slice(0, cut)], false));
        const full = merged(readAll([patch.text]));
        if (!isPrefixStream(early, full)) fail(`[R4] cut at ${cut}: ${JSON.stringify(early.slice(-3))} is not where ${JSON.stringify(full)} stood`);
      }),
      runs,
    );
  });

  it('[R6] a cut or corrupted patch ends in one error at the break, with nothing emitted past it, for any chunking', () => {
    fc.assert(
      fc.property(brokenPatch, chunking, ({ text, errorAt }, sizes) => {
        const events = merged(readAll(chunksOf(text, sizes)));
        const errors = events.filter((event) => event.type === 'error');
        const error = events.at(-1) as Extract<PatchEvent, { type: 'error' }>;
        if (errors.length !== 1 || error.type !== 'error') return fail(`[R6] expected one error last, got ${JSON.stringify(events.slice(-3))}`);
        expect(error.offset).toBe(errorAt);
        // Everything before the error was already certain from the text before the error.
        expect(events.slice(0, -1)).toEqual(merged(readAll([text.slice(0, error.offset)], false)));
        expect(grammarProblem(events)).toBeNull();
      }),
      runs,
    );
  });
});
