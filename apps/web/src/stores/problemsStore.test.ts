import { describe, expect, it } from 'vitest';
import { setProblems, toggleProblems, useProblems, type Problem } from './problemsStore';

const problem = (severity: Problem['severity'], line: number, message = `${severity} at ${line}`): Problem => ({ severity, message, source: 'ts', line, column: 1 });

describe('the Problems list', () => {
  it('groups by file in path order, errors first then by line, and counts errors and warnings', () => {
    setProblems(
      new Map([
        ['src/b.ts', [problem('warning', 2), problem('error', 9), problem('info', 1), problem('error', 3)]],
        ['src/a.ts', [problem('warning', 5)]],
        ['src/empty.ts', []],
      ]),
    );
    const { files, errors, warnings } = useProblems.getState();
    expect(files.map((f) => f.path)).toEqual(['src/a.ts', 'src/b.ts']);
    expect(files[1]?.problems.map((p) => `${p.severity}:${p.line}`)).toEqual(['error:3', 'error:9', 'warning:2', 'info:1']);
    expect({ errors, warnings }).toEqual({ errors: 2, warnings: 2 });
  });

  it('opening asks for the keyboard; closing does not', () => {
    useProblems.setState({ open: false, focusRequest: 0 });
    toggleProblems();
    expect(useProblems.getState()).toMatchObject({ open: true, focusRequest: 1 });
    toggleProblems();
    expect(useProblems.getState()).toMatchObject({ open: false, focusRequest: 1 });
  });
});
