import { propertyParameters } from '@flint/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flattenMessage, problemsDiff, type Problem } from './problemsDiff';

const problem = (start: number, excerpt: string, code = 2304, message = `Cannot find name '${excerpt}'.`): Problem => ({ severity: 'error', code, message, start, excerpt });

describe('problemsDiff', () => {
  it('matches problems by what they say and flag, not by where they are', () => {
    const before = [problem(10, 'x'), problem(40, 'y')];
    // The agent inserted a line above (offsets moved), fixed `y`, and misspelled a name.
    const after = [problem(30, 'x'), problem(52, 'tsks')];
    const { added, fixed } = problemsDiff(before, after);
    expect(added.map((p) => p.excerpt)).toEqual(['tsks']);
    expect(fixed.map((p) => p.excerpt)).toEqual(['y']);
  });

  it('takes a problem whose flagged text the edit went through for the same problem', () => {
    const message = "Property 'id' is missing in type '{ title: string; }'.";
    const before = [problem(4, "{ title: 'a' }", 2741, message)];
    const after = [problem(4, "{ title: 'a, b' }", 2741, message), problem(30, "{ title: 'c' }", 2741, message)];
    const { added, fixed } = problemsDiff(before, after);
    expect(added.map((p) => p.start)).toEqual([30]);
    expect(fixed).toEqual([]);
  });

  it('counts equal problems as many times as they occur', () => {
    const { added, fixed } = problemsDiff([problem(1, 'x'), problem(9, 'x')], [problem(1, 'x'), problem(9, 'x'), problem(20, 'x')]);
    expect(added.map((p) => p.start)).toEqual([20]);
    expect(fixed).toEqual([]);
  });

  it('tells a warning from an error with the same message', () => {
    const warning: Problem = { ...problem(5, 'x'), severity: 'warning' };
    const { added, fixed } = problemsDiff([warning], [problem(5, 'x')]);
    expect(added).toHaveLength(1);
    expect(fixed).toHaveLength(1);
  });

  it('what was before, less the fixed, plus the added, is what is after, as multisets', () => {
    const key = (p: Problem) => `${p.severity}|${p.code}|${p.excerpt}`;
    const sorted = (list: Problem[]) => list.map(key).sort();
    const anyProblem = fc
      .record({ start: fc.integer({ min: 0, max: 99 }), excerpt: fc.constantFrom('a', 'b', 'c'), severity: fc.oneof({ arbitrary: fc.constant('error' as const), weight: 4 }, { arbitrary: fc.constant('warning' as const), weight: 1 }) })
      .map(({ start, excerpt, severity }): Problem => ({ ...problem(start, excerpt), severity }));
    const problems = fc.array(anyProblem, { maxLength: 5, size: 'max' });
    fc.assert(
      fc.property(problems, problems, (before, after) => {
        const { added, fixed } = problemsDiff(before, after);
        const kept = [...before];
        for (const gone of fixed) kept.splice(kept.indexOf(gone), 1);
        expect(sorted([...kept, ...added])).toEqual(sorted(after));
        // Nothing is both added and fixed: a problem found on both sides, its flagged text changed
        // or not, is matched, not reported.
        const loose = (p: Problem) => `${p.severity}|${p.code}|${p.message}`;
        const fixedKeys = new Set(fixed.map(loose));
        expect(added.filter((p) => fixedKeys.has(loose(p)))).toEqual([]);
      }),
      propertyParameters(300),
    );
  });
});

describe('flattenMessage', () => {
  it('puts each reason of a chain on its own line, indented under the one it explains', () => {
    const chain = { messageText: "Type 'number' is not assignable to type 'Task'.", next: [{ messageText: "Property 'id' is missing.", next: [] }] };
    expect(flattenMessage(chain)).toBe("Type 'number' is not assignable to type 'Task'.\n  Property 'id' is missing.");
    expect(flattenMessage('plain')).toBe('plain');
  });
});
