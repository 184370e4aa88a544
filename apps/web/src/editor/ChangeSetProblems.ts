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

type WorkerDiagnostic = Awaited<ReturnType<IncrementalTypeScriptWorker['diagnosticsWithStandIn']>>['own'][number];
/** The worker as the page reaches it: Monaco's proxy has every method of our worker class. */
type WorkerProxy = Pick<IncrementalTypeScriptWorker, 'diagnosticsWithStandIn'>;

/**
 * What the agent's pending changes do to a TypeScript file's problems (DESIGN §7): the file's
 * diagnostics as it is against those it would have with its pending hunks rejected, from one
 * turn of the worker (decision 0018). Checked once the file settles after a turn stopped
 * writing, a review or an edit, and when its markers change (another file changed what it
 * resolves to); never while the agent streams into it.
 */
export class ChangeSetProblems {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private target: ReviewTarget | null = null;
  /** What the last check was (or is being) made for; a new key makes it stale. */
  private checkedKey: string | null = null;
  /** The hunks the published result speaks for: other hunks withdraw it at once. */
  private publishedHunks: string | null = null;
  /** Bumped when the target's markers change: other files may have changed its problems. */
  private markersChanged = 0;
  private readonly markers: monaco.IDisposable;

  constructor(private readonly publish: (fileId: string | null, diff: ProblemsDiff | null) => void) {
    this.markers = monaco.editor.onDidChangeMarkers((uris) => {
      const target = this.target;
      if (!target || !uris.some((uri) => uri.toString() === target.model.uri.toString())) return;
      this.markersChanged++;
      this.update(target);
    });
  }

  /** The target as of this frame; null when there is nothing to review. */
  update(target: ReviewTarget | null): void {
    const checked = target !== null && !target.model.isDisposed() && target.model.getLanguageId() === 'typescript' ? target : null;
    this.target = checked;
    if (!checked) {
      if (this.checkedKey === null) return;
      this.checkedKey = null;
      this.clearTimer();
      return this.withdraw();
    }
    const hunks = `${checked.model.id}:${checked.hunkIds.join(',')}`;
    const key = `${hunks}:${checked.model.getVersionId()}:${this.markersChanged}`;
    if (key === this.checkedKey) return;
    this.checkedKey = key;
    this.clearTimer();
    // A result for other hunks is wrong now; one for the same hunks and older text stays until
    // the next check replaces it (no flicker while someone types).
    if (hunks !== this.publishedHunks) this.withdraw();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check(checked, key, hunks).catch((error: unknown) => {
        console.warn('Flint: checking what the pending changes do to TypeScript problems failed', error);
        if (key === this.checkedKey) this.withdraw();
      });
    }, settleMs);
  }

  private async check(target: ReviewTarget, key: string, hunks: string): Promise<void> {
    const { model, doc } = target;
    const chosen = new Set(target.hunkIds);
    const original = textWithRejected(doc, FILE_TEXT_KEY, (hunkId) => chosen.has(hunkId));
    const current = model.getValue();
    const getWorker = await monaco.typescript.getTypeScriptWorker();
    const worker = (await getWorker(model.uri)) as unknown as WorkerProxy;
    if (key !== this.checkedKey || model.isDisposed()) return;
    const { own, standIn } = await worker.diagnosticsWithStandIn(model.uri.toString(), original);
    // The file changed while the worker checked: the next check is already scheduled.
    if (key !== this.checkedKey || model.isDisposed() || model.getValue() !== current) return;
    const ignored = new Set(monaco.typescript.typescriptDefaults.getDiagnosticsOptions().diagnosticCodesToIgnore ?? []);
    const problems = (list: WorkerDiagnostic[], text: string) => list.flatMap((d) => (ignored.has(d.code) ? [] : problemOf(d, text)));
    this.publishedHunks = hunks;
    this.publish(target.fileId, problemsDiff(problems(standIn, original), problems(own, current)));
  }

  private withdraw(): void {
    this.publishedHunks = null;
    this.publish(null, null);
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  dispose(): void {
    this.clearTimer();
    this.markers.dispose();
    this.target = null;
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
