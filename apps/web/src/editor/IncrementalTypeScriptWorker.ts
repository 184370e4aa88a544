import { TypeScriptWorker, type WorkerContext, type WorkerDiagnostic } from 'monaco-editor/languages/features/typescript/tsWorker';

/** TypeScript's `TextChangeRange`: the old text's `span` was replaced by `newLength` characters. */
export interface TextChangeRange {
  span: { start: number; length: number };
  newLength: number;
}

/**
 * The smallest single range that turns `before` into `after`: their common prefix and suffix are
 * left out (the suffix never overlaps the prefix). Edits far apart (the user on line 3, the agent
 * on line 20) give one range spanning both, which is still exact — just less to reuse.
 */
export function changeRangeBetween(before: string, after: string): TextChangeRange {
  const shorter = Math.min(before.length, after.length);
  let start = 0;
  while (start < shorter && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let suffix = 0;
  while (suffix < shorter - start && before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)) suffix++;
  return { span: { start, length: before.length - start - suffix }, newLength: after.length - start - suffix };
}

/** A file's text at one version, which can say what changed since an earlier one. */
export class TextSnapshot {
  constructor(readonly text: string) {}

  getText(start: number, end: number): string {
    return this.text.substring(start, end);
  }

  getLength(): number {
    return this.text.length;
  }

  /** `undefined` tells TypeScript to parse the file from scratch. */
  getChangeRange(old: unknown): TextChangeRange | undefined {
    return old instanceof TextSnapshot ? changeRangeBetween(old.text, this.text) : undefined;
  }
}

/**
 * Monaco's TypeScript worker, parsing incrementally. Monaco's own language-service host hands
 * TypeScript a fresh snapshot with no change range for every new version of a model, so each
 * request after an edit — a completion, a diagnostics pass, a code fix — re-parses the whole
 * file: on a 20,000-line file that is most of a request's ~600 ms of worker time, and the
 * agent changes the file in every frame. With a change range TypeScript re-parses only around
 * the edit and reuses the rest of the old tree (docs/decisions/0009).
 */
export class IncrementalTypeScriptWorker extends TypeScriptWorker {
  private readonly snapshots = new Map<string, { version: string; snapshot: TextSnapshot }>();
  /** A text read in place of a model's for one check (diagnosticsWithStandIn). */
  private standIn: { fileName: string; text: string; version: string } | null = null;
  private standIns = 0;

  override getScriptVersion(fileName: string): string {
    return this.standIn?.fileName === fileName ? this.standIn.version : super.getScriptVersion(fileName);
  }

  override getScriptSnapshot(fileName: string): TextSnapshot | undefined {
    const version = this.getScriptVersion(fileName);
    const known = this.snapshots.get(fileName);
    if (known?.version === version) return known.snapshot;
    const text = this.standIn?.fileName === fileName ? this.standIn.text : this._getScriptText(fileName);
    if (text === undefined) {
      this.snapshots.delete(fileName);
      return undefined;
    }
    const snapshot = new TextSnapshot(text);
    this.snapshots.set(fileName, { version, snapshot });
    return snapshot;
  }

  /**
   * The syntactic and semantic diagnostics of `fileName` as it is (`own`), and those it would
   * have were its text `text` (`standIn`), the rest of the workspace as it is: the file before
   * the agent's pending changes, say. Both in one turn of the worker, so both see the same state
   * of the other files. The stand-in replaces the model's text for its two checks only (each
   * change of version parses incrementally), rather than a second model beside the file, which
   * would re-declare a script file's globals (decision 0018).
   */
  async diagnosticsWithStandIn(fileName: string, text: string): Promise<{ own: WorkerDiagnostic[]; standIn: WorkerDiagnostic[] }> {
    // Monaco's worker methods do their work before their first await: each pair reads the
    // text that is in place when it is called.
    const own = [this.getSyntacticDiagnostics(fileName), this.getSemanticDiagnostics(fileName)];
    this.standIn = { fileName, text, version: `stand-in ${++this.standIns}` };
    let standIn: Array<Promise<WorkerDiagnostic[]>>;
    try {
      standIn = [this.getSyntacticDiagnostics(fileName), this.getSemanticDiagnostics(fileName)];
    } finally {
      this.standIn = null;
    }
    return { own: (await Promise.all(own)).flat(), standIn: (await Promise.all(standIn)).flat() };
  }
}

export type { WorkerContext };
