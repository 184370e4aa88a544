import { create } from 'zustand';

export type ProblemSeverity = 'error' | 'warning' | 'info';

/** One of Monaco's markers (TypeScript's diagnostics, the agent's problems), in a person's terms. */
export interface Problem {
  severity: ProblemSeverity;
  message: string;
  /** Who reported it ("ts", with the code when there is one: "ts(2304)"). */
  source: string | null;
  line: number;
  column: number;
}

export interface FileProblems {
  path: string;
  problems: readonly Problem[];
}

interface ProblemsState {
  /** Per open file with any problem, by path; errors first within a file, then by line. */
  files: readonly FileProblems[];
  errors: number;
  warnings: number;
  /** The Problems panel (Ctrl/Cmd+Shift+M) is open. */
  open: boolean;
  /** Bumped when the panel should take the keyboard (it was opened by a shortcut). */
  focusRequest: number;
}

export const useProblems = create<ProblemsState>(() => ({ files: [], errors: 0, warnings: 0, open: false, focusRequest: 0 }));

const rank: Record<ProblemSeverity, number> = { error: 0, warning: 1, info: 2 };

/** Replaces what the panel and the status bar show (ProblemsWatcher calls it when markers change). */
export function setProblems(byPath: ReadonlyMap<string, Problem[]>): void {
  let errors = 0;
  let warnings = 0;
  const files: FileProblems[] = [];
  for (const path of [...byPath.keys()].sort()) {
    const problems = [...(byPath.get(path) ?? [])].sort((a, b) => rank[a.severity] - rank[b.severity] || a.line - b.line || a.column - b.column);
    if (problems.length === 0) continue;
    for (const p of problems) {
      if (p.severity === 'error') errors++;
      else if (p.severity === 'warning') warnings++;
    }
    files.push({ path, problems });
  }
  useProblems.setState({ files, errors, warnings });
}

/** Ctrl/Cmd+Shift+M: opens the panel with the keyboard in it, or closes it. */
export function toggleProblems(): void {
  useProblems.setState((state) => (state.open ? { open: false } : { open: true, focusRequest: state.focusRequest + 1 }));
}

export function closeProblems(): void {
  useProblems.setState({ open: false });
}
