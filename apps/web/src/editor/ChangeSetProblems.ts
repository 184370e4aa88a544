import { textWithRejected } from '@flint/change-set';
import { FILE_TEXT_KEY } from '@flint/protocol';
import type * as Y from 'yjs';
import type { IncrementalTypeScriptWorker } from './IncrementalTypeScriptWorker';
import { monaco } from './monacoSetup';
import { flattenMessage, problemsDiff, type Problem, type ProblemsDiff } from './problemsDiff';

/** Wait for the file to settle (the last flush of a turn, a burst of typing) before checking. */
const settleMs = 400;

/** The file on screen, and whether it has pending changes that are done being written. */
export interface ReviewTarget {
  fileId: string;
  model: monaco.editor.ITextModel;
  doc: Y.Doc;
  /** The pending hunks, none of them still being written: what Reject all would take back. */
  hunkIds: readonly string[];
}

type WorkerDiagnostic = Awaited<ReturnType<IncrementalTypeScriptWorker['diagnosticsOfText']>>[number];
/** The worker as the page reaches it: Monaco's proxy has every method of our worker class. */
type WorkerProxy = Pick<IncrementalTypeScriptWorker, 'diagnosticsOfText' | 'getSyntacticDiagnostics' | 'getSemanticDiagnostics'>;

/**
 * What the agent's pending changes do to a TypeScript file's problems (DESIGN §7): the file's
 * diagnostics as it is against those it would have with every pending hunk rejected, from the
 * same worker and the same state of the other files. Asked once the file settles after a turn
 * stopped writing or a review, never while the agent streams into it.
 */
export class ChangeSetProblems {
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** What the last check was (or is being) made for; a new target makes it stale. */
  private checkedKey: string | null = null;

  constructor(private readonly publish: (fileId: string | null, diff: ProblemsDiff | null) => void) {}

  /** The target as of this frame; null when there is nothing to review. */
  update(target: ReviewTarget | null): void {
    const key = target && target.model.getLanguageId() === 'typescript' ? `${target.model.id}:${target.model.getVersionId()}:${target.hunkIds.join(',')}` : null;
    if (key === this.checkedKey) return;
    this.checkedKey = key;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (key === null || !target) {
      this.publish(null, null);
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check(target, key).catch((error: unknown) => console.warn('Flint: checking what the pending changes do to TypeScript problems failed', error));
    }, settleMs);
  }

  private async check(target: ReviewTarget, key: string): Promise<void> {
    const { model, doc } = target;
    const original = textWithRejected(doc, FILE_TEXT_KEY);
    const current = model.getValue();
    const getWorker = await monaco.typescript.getTypeScriptWorker();
    const worker = (await getWorker(model.uri)) as unknown as WorkerProxy;
    if (key !== this.checkedKey || model.isDisposed()) return;
    const uri = model.uri.toString();
    const [before, syntactic, semantic] = await Promise.all([worker.diagnosticsOfText(uri, original), worker.getSyntacticDiagnostics(uri), worker.getSemanticDiagnostics(uri)]);
    // The file changed while the worker checked: the next check is already scheduled.
    if (key !== this.checkedKey || model.isDisposed() || model.getValue() !== current) return;
    const ignored = new Set(monaco.typescript.typescriptDefaults.getDiagnosticsOptions().diagnosticCodesToIgnore ?? []);
    const problems = (list: WorkerDiagnostic[], text: string) => list.flatMap((d) => (ignored.has(d.code) ? [] : problemOf(d, text)));
    this.publish(target.fileId, problemsDiff(problems(before, original), problems([...syntactic, ...semantic], current)));
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.checkedKey = null;
  }
}

/** Errors and warnings; TypeScript's suggestions and messages are not problems to report. */
function problemOf(diagnostic: WorkerDiagnostic, text: string): Problem[] {
  if (diagnostic.category !== 0 && diagnostic.category !== 1) return [];
  const start = diagnostic.start ?? 0;
  return [
    {
      severity: diagnostic.category === 1 ? 'error' : 'warning',
      code: diagnostic.code,
      message: flattenMessage(diagnostic.messageText),
      start,
      excerpt: text.slice(start, start + (diagnostic.length ?? 0)),
    },
  ];
}
