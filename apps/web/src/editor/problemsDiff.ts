/** A TypeScript diagnostic of one version of a file, as the review pill reports it. */
export interface Problem {
  severity: 'error' | 'warning';
  code: number;
  message: string;
  /** Offset of the flagged text in that version. */
  start: number;
  /** The flagged text itself: what tells two problems with the same message apart. */
  excerpt: string;
}

/** What the agent's pending changes do to a file's problems. */
export interface ProblemsDiff {
  /** Problems of the file as it is that it would not have with the changes rejected. */
  added: Problem[];
  /** Problems it would have with the changes rejected that it no longer has. */
  fixed: Problem[];
}

/**
 * Compares the problems of two versions of a file. Offsets move with every edit, so a problem
 * is known by its severity, code, message and flagged text; equal ones count as many times as
 * they occur (two `x` undefined before, three after: one added). What is left is matched once
 * more without the flagged text: a problem whose flagged text the edit went through (a call
 * that spans the changed line) is the same problem, not one fixed and one new.
 */
export function problemsDiff(before: readonly Problem[], after: readonly Problem[]): ProblemsDiff {
  const exact = (problem: Problem) => `${problem.severity}\u0000${problem.code}\u0000${problem.message}\u0000${problem.excerpt}`;
  const loose = (problem: Problem) => `${problem.severity}\u0000${problem.code}\u0000${problem.message}`;
  let unmatched = { before: [...before], after: [...after] };
  for (const keyOf of [exact, loose]) unmatched = matchAway(unmatched.before, unmatched.after, keyOf);
  const byStart = (a: Problem, b: Problem) => a.start - b.start;
  return { added: unmatched.after.sort(byStart), fixed: unmatched.before.sort(byStart) };
}

/** Pairs equal problems of the two lists off; returns those left on each side. */
function matchAway(before: Problem[], after: Problem[], keyOf: (problem: Problem) => string): { before: Problem[]; after: Problem[] } {
  const waiting = new Map<string, Problem[]>();
  for (const problem of before) {
    const key = keyOf(problem);
    const list = waiting.get(key);
    if (list) list.push(problem);
    else waiting.set(key, [problem]);
  }
  const left: Problem[] = [];
  for (const problem of after) {
    const list = waiting.get(keyOf(problem));
    if (list && list.length > 0) list.shift();
    else left.push(problem);
  }
  return { before: [...waiting.values()].flat(), after: left };
}

/** TypeScript's message chain, as one string: its first line and each reason under it. */
export type MessageChain = string | { messageText: string; next?: MessageChain[] };

export function flattenMessage(message: MessageChain, indent = 0): string {
  if (typeof message === 'string') return message;
  const head = '  '.repeat(indent) + message.messageText;
  return [head, ...(message.next ?? []).map((next) => flattenMessage(next, indent + 1))].join('\n');
}
