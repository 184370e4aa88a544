import { monaco } from './monacoSetup';
import { flattenMessage } from './problemsDiff';

type Diagnostic = monaco.typescript.Diagnostic;

/** Wait for a pause in other files' changes: a peer (or the AI) may be typing at speed. */
const settleMs = 600;

function severityOf(category: number): monaco.MarkerSeverity {
  switch (category) {
    case 0:
      return monaco.MarkerSeverity.Warning;
    case 1:
      return monaco.MarkerSeverity.Error;
    case 2:
      return monaco.MarkerSeverity.Hint;
    default:
      return monaco.MarkerSeverity.Info;
  }
}

/**
 * Monaco re-checks a TypeScript model only when that model changes, so the file on screen
 * keeps stale errors when another file changes under it (a peer renames an export, a file is
 * moved). This re-checks the visible model after any other workspace model changes, writing
 * markers under the same owner as Monaco's own checker so the two replace each other.
 */
export class DiagnosticsRefresher {
  private readonly disposables: monaco.IDisposable[] = [];
  private readonly contentListeners = new Map<monaco.editor.ITextModel, monaco.IDisposable>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly editor: monaco.editor.IStandaloneCodeEditor) {
    const watch = (model: monaco.editor.ITextModel) => {
      this.contentListeners.set(
        model,
        model.onDidChangeContent(() => {
          if (model !== editor.getModel()) this.schedule();
        }),
      );
      this.schedule();
    };
    monaco.editor.getModels().forEach(watch);
    this.disposables.push(
      monaco.editor.onDidCreateModel(watch),
      monaco.editor.onWillDisposeModel((model) => {
        this.contentListeners.get(model)?.dispose();
        this.contentListeners.delete(model);
        this.schedule();
      }),
    );
  }

  private schedule(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refresh().catch((error: unknown) => console.warn('Flint: re-checking the open file failed; its markers may be stale', error));
    }, settleMs);
  }

  private async refresh(): Promise<void> {
    const model = this.editor.getModel();
    if (!model) return;
    const language = model.getLanguageId();
    if (language !== 'typescript' && language !== 'javascript') return;
    const defaults = language === 'typescript' ? monaco.typescript.typescriptDefaults : monaco.typescript.javascriptDefaults;
    const options = defaults.getDiagnosticsOptions();
    const getWorker = await (language === 'typescript' ? monaco.typescript.getTypeScriptWorker() : monaco.typescript.getJavaScriptWorker());
    const worker = await getWorker(model.uri);
    if (model.isDisposed()) return; // renamed or deleted while the worker started
    const uri = model.uri.toString();
    const version = model.getVersionId();
    const lists = await Promise.all([
      options.noSyntaxValidation ? [] : worker.getSyntacticDiagnostics(uri),
      options.noSemanticValidation ? [] : worker.getSemanticDiagnostics(uri),
      options.noSuggestionDiagnostics ? [] : worker.getSuggestionDiagnostics(uri),
    ]);
    // A newer edit of this model has its own check coming from Monaco; don't overwrite it.
    if (model.isDisposed() || model.getVersionId() !== version) return;
    const ignored = new Set(options.diagnosticCodesToIgnore ?? []);
    const markers = lists.flat().filter((d) => !ignored.has(d.code)).map((d) => this.toMarker(model, d));
    monaco.editor.setModelMarkers(model, language, markers);
  }

  private toMarker(model: monaco.editor.ITextModel, diagnostic: Diagnostic): monaco.editor.IMarkerData {
    const start = model.getPositionAt(diagnostic.start ?? 0);
    const end = model.getPositionAt((diagnostic.start ?? 0) + (diagnostic.length ?? 1));
    const tags: monaco.MarkerTag[] = [];
    if (diagnostic.reportsUnnecessary) tags.push(monaco.MarkerTag.Unnecessary);
    if (diagnostic.reportsDeprecated) tags.push(monaco.MarkerTag.Deprecated);
    return {
      severity: severityOf(diagnostic.category),
      startLineNumber: start.lineNumber,
      startColumn: start.column,
      endLineNumber: end.lineNumber,
      endColumn: end.column,
      message: flattenMessage(diagnostic.messageText),
      code: String(diagnostic.code),
      tags,
    };
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    for (const listener of this.contentListeners.values()) listener.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }
}
