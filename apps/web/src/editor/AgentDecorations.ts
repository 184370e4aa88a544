import type { HunkView } from '@flint/change-set';
import { mergeSpans, type LineSpan } from './lineSpans';
import { monaco } from './monacoSetup';

interface RemovedZone {
  id: string;
  zone: monaco.editor.IViewZone;
  original: string;
}

/**
 * Where a hunk's removed text is drawn. The agent's hunks record it after the inserted text
 * (that is where reject puts it back); it reads as a diff when drawn just before it instead.
 */
export function removedDisplayIndex(view: HunkView): number | null {
  if (view.removedAt === null || !view.record.original) return null;
  const live = view.inserted.filter((range) => range.length > 0);
  const first = live[0];
  const last = live[live.length - 1];
  return first && last && last.index + last.length === view.removedAt ? first.index : view.removedAt;
}

/** The lines a hunk occupies: its inserted text, and the line its removed text is shown at. */
export function hunkLineSpan(model: monaco.editor.ITextModel, view: HunkView): LineSpan | null {
  let first = Infinity;
  let last = -Infinity;
  for (const range of view.inserted) {
    if (range.length === 0) continue;
    const start = model.getPositionAt(range.index);
    const end = model.getPositionAt(range.index + range.length);
    first = Math.min(first, start.lineNumber);
    // Text ending in a newline ends on the next line's first column: that line is not part of it.
    last = Math.max(last, end.column === 1 && end.lineNumber > start.lineNumber ? end.lineNumber - 1 : end.lineNumber);
  }
  const removedAt = removedDisplayIndex(view);
  if (removedAt !== null) {
    const line = model.getPositionAt(removedAt).lineNumber;
    first = Math.min(first, line);
    last = Math.max(last, line);
  }
  return first === Infinity ? null : { first, last };
}

/**
 * How the agent's pending changes look in the editor: what it inserted on a green tint, what it
 * removed in red and struck through — inline (injected text) when the removed text is part of
 * a line, as whole lines in a view zone when it spans lines. Rendered for every viewer alike;
 * AgentController calls `render` at most once per animation frame.
 */
export class AgentDecorations {
  private readonly collection: monaco.editor.IEditorDecorationsCollection;
  private readonly zones = new Map<string, RemovedZone>();

  constructor(private readonly editor: monaco.editor.IStandaloneCodeEditor) {
    this.collection = editor.createDecorationsCollection();
  }

  render(model: monaco.editor.ITextModel, views: readonly HunkView[]): void {
    const decorations: monaco.editor.IModelDeltaDecoration[] = [];
    const tinted: LineSpan[] = [];
    const wantedZones = new Map<string, { afterLineNumber: number; original: string }>();
    for (const view of views) {
      for (const range of view.inserted) {
        if (range.length === 0) continue;
        const start = model.getPositionAt(range.index);
        const end = model.getPositionAt(range.index + range.length);
        decorations.push({
          range: monaco.Range.fromPositions(start, end),
          options: { className: 'flint-inserted', stickiness: monaco.editor.TrackedRangeStickiness.NeverGrowsWhenTypingAtEdges },
        });
        const last = end.column === 1 && end.lineNumber > start.lineNumber ? end.lineNumber - 1 : end.lineNumber;
        tinted.push({ first: start.lineNumber, last });
      }
      const original = view.record.original;
      const removedAt = removedDisplayIndex(view);
      if (removedAt === null) continue;
      const at = model.getPositionAt(removedAt);
      if (!original.includes('\n')) {
        decorations.push({
          range: monaco.Range.fromPositions(at),
          // An empty range carries no injected text unless it is shown when collapsed.
          options: {
            showIfCollapsed: true,
            before: { content: original, inlineClassName: 'flint-removed', cursorStops: monaco.editor.InjectedTextCursorStops.None },
          },
        });
      } else {
        // Removed whole lines sit above the line they were cut from; a cut that starts mid-line
        // reads better below it.
        wantedZones.set(view.hunkId, { afterLineNumber: at.column === 1 ? at.lineNumber - 1 : at.lineNumber, original });
      }
    }
    // One whole-line decoration per run of tinted lines, not one per line: an agent writing
    // thousands of lines would otherwise hand Monaco thousands of decorations every frame.
    for (const span of mergeSpans(tinted)) {
      decorations.push({
        range: new monaco.Range(span.first, 1, span.last, 1),
        options: { isWholeLine: true, className: 'flint-inserted-line', linesDecorationsClassName: 'flint-inserted-gutter' },
      });
    }
    this.collection.set(decorations);
    this.syncZones(wantedZones);
  }

  /** Zones are kept while their hunk lives: only a moved one is laid out again, never rebuilt per frame. */
  private syncZones(wanted: Map<string, { afterLineNumber: number; original: string }>): void {
    const stale = [...this.zones.keys()].filter((hunkId) => !wanted.has(hunkId));
    const changed = [...wanted].filter(([hunkId, want]) => {
      const zone = this.zones.get(hunkId);
      return !zone || zone.zone.afterLineNumber !== want.afterLineNumber || zone.original !== want.original;
    });
    if (stale.length === 0 && changed.length === 0) return;
    this.editor.changeViewZones((accessor) => {
      for (const hunkId of stale) {
        accessor.removeZone(this.zones.get(hunkId)!.id);
        this.zones.delete(hunkId);
      }
      for (const [hunkId, want] of changed) {
        const existing = this.zones.get(hunkId);
        if (existing && existing.original === want.original) {
          existing.zone.afterLineNumber = want.afterLineNumber;
          accessor.layoutZone(existing.id);
          continue;
        }
        if (existing) accessor.removeZone(existing.id);
        const zone = this.removedZone(want.afterLineNumber, want.original);
        this.zones.set(hunkId, { id: accessor.addZone(zone), zone, original: want.original });
      }
    });
  }

  private removedZone(afterLineNumber: number, original: string): monaco.editor.IViewZone {
    const lines = original.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const fontInfo = this.editor.getOption(monaco.editor.EditorOption.fontInfo);
    const domNode = document.createElement('div');
    domNode.className = 'flint-removed-zone';
    Object.assign(domNode.style, {
      fontFamily: fontInfo.fontFamily,
      fontSize: `${fontInfo.fontSize}px`,
      lineHeight: `${fontInfo.lineHeight}px`,
      tabSize: String(this.editor.getModel()?.getOptions().tabSize ?? 2),
    });
    for (const line of lines) {
      const row = document.createElement('div');
      row.className = 'flint-removed';
      row.style.height = `${fontInfo.lineHeight}px`;
      row.textContent = line;
      domNode.append(row);
    }
    // The red bar lines up with the green one AgentDecorations draws in the line decorations lane.
    const marginDomNode = document.createElement('div');
    marginDomNode.className = 'flint-removed-margin';
    const bar = document.createElement('div');
    bar.className = 'flint-removed-bar';
    bar.style.left = `${this.editor.getLayoutInfo().decorationsLeft + 3}px`;
    marginDomNode.append(bar);
    return { afterLineNumber, heightInLines: lines.length, domNode, marginDomNode, suppressMouseDown: true };
  }

  clear(): void {
    this.collection.clear();
    if (this.zones.size === 0) return;
    this.editor.changeViewZones((accessor) => {
      for (const zone of this.zones.values()) accessor.removeZone(zone.id);
    });
    this.zones.clear();
  }

  dispose(): void {
    this.clear();
  }
}
