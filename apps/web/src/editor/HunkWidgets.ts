import type { HunkView } from '@flint/change-set';
import { hunkLineSpan, removedDisplayIndex } from './AgentDecorations';
import { monaco } from './monacoSetup';

export interface HunkActions {
  accept(hunkId: string): void;
  reject(hunkId: string): void;
}

interface HunkWidget extends monaco.editor.IContentWidget {
  node: HTMLElement;
  at: monaco.IPosition;
  preference: monaco.editor.ContentWidgetPositionPreference;
}

/** Room for one widget when several hunks start on the same line. */
const widgetSpacingPx = 52;
/** The ✓ ✕ box and the gap before it, at the end of a line. */
const widgetWidthPx = 46;
const widgetGapPx = 16;

/**
 * Accept / Reject buttons for each pending hunk an editor can review, never over its text: at
 * the end of the hunk's first line when they fit beside it, else on a row of their own just
 * above the hunk (a view zone makes the row, like VS Code's inline diff toolbar). Widgets are
 * kept per hunk and only moved as the text changes, so a frame that changes nothing touches no
 * DOM.
 */
export class HunkWidgets {
  private readonly widgets = new Map<string, HunkWidget>();
  /** The rows made above hunks whose first line is too long, by the line they sit above. */
  private readonly rows = new Map<number, string>();

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    private readonly actions: HunkActions,
    private readonly shortcuts: { accept: string },
  ) {}

  render(model: monaco.editor.ITextModel, views: readonly HunkView[]): void {
    const seen = new Set<string>();
    const perLine = new Map<number, number>();
    const rowsAbove = new Set<number>();
    const layout = this.editor.getLayoutInfo();
    const charWidth = this.editor.getOption(monaco.editor.EditorOption.fontInfo).typicalHalfwidthCharacterWidth;
    const roomPx = layout.contentWidth - layout.verticalScrollbarWidth;
    const { ABOVE, BELOW, EXACT } = monaco.editor.ContentWidgetPositionPreference;
    const removed = removedColumnsByLine(model, views);
    for (const view of views) {
      const span = hunkLineSpan(model, view);
      if (!span) continue;
      seen.add(view.hunkId);
      const slot = perLine.get(span.first) ?? 0;
      perLine.set(span.first, slot + 1);
      const endPx = shownColumns(model, span.first, removed) * charWidth;
      const fits = endPx + widgetGapPx + slot * widgetSpacingPx + widgetWidthPx <= roomPx;
      if (!fits) rowsAbove.add(span.first);
      // The row above is a zone right under the previous line: the buttons hang below that line
      // (above line 1, the first line, when there is none).
      const at = fits
        ? { lineNumber: span.first, column: model.getLineMaxColumn(span.first) }
        : { lineNumber: Math.max(1, span.first - 1), column: 1 };
      const preference = fits ? EXACT : span.first > 1 ? BELOW : ABOVE;
      const margin = `${(fits ? widgetGapPx : 0) + slot * widgetSpacingPx}px`;
      const existing = this.widgets.get(view.hunkId);
      if (!existing) {
        const widget = this.create(view.hunkId, at, preference);
        widget.node.style.marginLeft = margin;
        this.widgets.set(view.hunkId, widget);
        this.editor.addContentWidget(widget);
        continue;
      }
      if (existing.node.style.marginLeft !== margin) existing.node.style.marginLeft = margin;
      if (existing.at.lineNumber !== at.lineNumber || existing.at.column !== at.column || existing.preference !== preference) {
        existing.at = at;
        existing.preference = preference;
        this.editor.layoutContentWidget(existing);
      }
    }
    for (const [hunkId, widget] of this.widgets) {
      if (seen.has(hunkId)) continue;
      this.editor.removeContentWidget(widget);
      this.widgets.delete(hunkId);
    }
    this.syncRows(rowsAbove);
  }

  private syncRows(wanted: ReadonlySet<number>): void {
    const stale = [...this.rows.keys()].filter((line) => !wanted.has(line));
    const added = [...wanted].filter((line) => !this.rows.has(line));
    if (stale.length === 0 && added.length === 0) return;
    this.editor.changeViewZones((accessor) => {
      for (const line of stale) {
        accessor.removeZone(this.rows.get(line)!);
        this.rows.delete(line);
      }
      for (const line of added) {
        // Where the buttons hang (see render): right under the line above, before the hunk's
        // removed lines (AgentDecorations' zones, ordinal 10000); above line 1, right over it.
        const ordinal = line > 1 ? 0 : 20_000;
        const zone: monaco.editor.IViewZone = { afterLineNumber: line - 1, ordinal, heightInLines: 1, domNode: document.createElement('div'), suppressMouseDown: true };
        this.rows.set(line, accessor.addZone(zone));
      }
    });
  }

  private create(hunkId: string, at: monaco.IPosition, preference: monaco.editor.ContentWidgetPositionPreference): HunkWidget {
    const node = document.createElement('div');
    node.className = 'flint-hunk-actions';
    node.append(
      this.button('✓', 'hunk-accept', `Accept this change (${this.shortcuts.accept} with the caret in it)`, 'flint-hunk-accept', () => this.actions.accept(hunkId)),
      this.button('✕', 'hunk-reject', 'Reject this change: put the original back', 'flint-hunk-reject', () => this.actions.reject(hunkId)),
    );
    const widget: HunkWidget = {
      node,
      at,
      preference,
      getId: () => `flint.hunk.${hunkId}`,
      getDomNode: () => node,
      getPosition: () => ({ position: widget.at, preference: [widget.preference] }),
    };
    return widget;
  }

  private button(label: string, testId: string, title: string, className: string, onClick: () => void): HTMLButtonElement {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = className;
    button.textContent = label;
    button.title = title;
    button.setAttribute('aria-label', title);
    button.dataset.testid = testId;
    // Keep the caret where it is: a click here is a review, not a move into the text.
    button.addEventListener('mousedown', (event) => event.preventDefault());
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      onClick();
    });
    return button;
  }

  clear(): void {
    for (const widget of this.widgets.values()) this.editor.removeContentWidget(widget);
    this.widgets.clear();
    this.syncRows(new Set());
  }

  dispose(): void {
    this.clear();
  }
}

/**
 * How many columns `line` takes on screen: its text with tabs expanded, and the removed text the
 * hunks on it show inline (AgentDecorations' injected text, counted per line by `removedColumnsByLine`).
 */
function shownColumns(model: monaco.editor.ITextModel, line: number, removed: ReadonlyMap<number, number>): number {
  const tabSize = model.getOptions().tabSize;
  let columns = 0;
  for (const ch of model.getLineContent(line)) columns = ch === '\t' ? columns + tabSize - (columns % tabSize) : columns + 1;
  return columns + (removed.get(line) ?? 0);
}

/** The columns of removed one-line text shown inline, per line: once per render, not per hunk. */
function removedColumnsByLine(model: monaco.editor.ITextModel, views: readonly HunkView[]): Map<number, number> {
  const byLine = new Map<number, number>();
  for (const view of views) {
    const at = removedDisplayIndex(view);
    if (at === null || view.record.original.includes('\n')) continue;
    const line = model.getPositionAt(at).lineNumber;
    byLine.set(line, (byLine.get(line) ?? 0) + view.record.original.length);
  }
  return byLine;
}
