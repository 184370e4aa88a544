import { setProblems, type Problem, type ProblemSeverity } from '../stores/problemsStore';
import { useWorkspace } from '../stores/workspaceStore';
import { pathOfUri } from './ModelRegistry';
import { monaco } from './monacoSetup';

function severityOf(severity: monaco.MarkerSeverity): ProblemSeverity | null {
  if (severity === monaco.MarkerSeverity.Error) return 'error';
  if (severity === monaco.MarkerSeverity.Warning) return 'warning';
  if (severity === monaco.MarkerSeverity.Info) return 'info';
  return null; // hints (unused variables greyed out) are not problems
}

function sourceOf(marker: monaco.editor.IMarker): string | null {
  const code = typeof marker.code === 'object' ? marker.code.value : marker.code;
  const source = marker.source ?? (marker.owner === 'typescript' || marker.owner === 'javascript' ? 'ts' : null);
  if (source === null) return null;
  return code ? `${source}(${code})` : source;
}

/**
 * Feeds the Problems panel and the status bar's counts with Monaco's markers in the files open
 * in some tab — as VS Code lists TypeScript's problems for open files. Files loaded only so
 * imports resolve (ModelRegistry) have markers too, but nobody asked to see them.
 */
export class ProblemsWatcher {
  private frame: number | null = null;
  private readonly disposers: Array<() => void> = [];

  constructor() {
    const markers = monaco.editor.onDidChangeMarkers(() => this.schedule());
    this.disposers.push(
      () => markers.dispose(),
      useWorkspace.subscribe((state, previous) => {
        if (state.tabs !== previous.tabs || state.pathById !== previous.pathById) this.schedule();
      }),
    );
    this.refresh();
  }

  /** Markers change for every file at each keystroke's check: gather them once a frame. */
  private schedule(): void {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.refresh();
    });
  }

  private refresh(): void {
    const { tabs, pathById } = useWorkspace.getState();
    const open = new Set(tabs.map((id) => pathById.get(id)).filter((p): p is string => p !== undefined));
    const byPath = new Map<string, Problem[]>();
    for (const marker of monaco.editor.getModelMarkers({})) {
      const path = pathOfUri(marker.resource);
      const severity = severityOf(marker.severity);
      if (path === null || severity === null || !open.has(path)) continue;
      const list = byPath.get(path) ?? [];
      list.push({ severity, message: marker.message, source: sourceOf(marker), line: marker.startLineNumber, column: marker.startColumn });
      byPath.set(path, list);
    }
    setProblems(byPath);
  }

  dispose(): void {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    for (const dispose of this.disposers) dispose();
  }
}
