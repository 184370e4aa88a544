import type { HunkView } from '@flint/change-set';
import { hunkLineSpan } from './AgentDecorations';
import { monaco } from './monacoSetup';

export interface HunkActions {
  accept(hunkId: string): void;
  reject(hunkId: string): void;
}

interface HunkWidget extends monaco.editor.IContentWidget {
  node: HTMLElement;
  at: monaco.IPosition;
}

/** Room for one widget when several hunks start on the same line. */
const widgetSpacingPx = 52;

/**
 * Accept / Reject buttons for each pending hunk an editor can review, at the end of the hunk's
 * first line. Widgets are kept per hunk and only moved as the text changes, so a frame that
 * changes nothing touches no DOM.
 */
export class HunkWidgets {
  private readonly widgets = new Map<string, HunkWidget>();

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    private readonly actions: HunkActions,
    private readonly shortcuts: { accept: string },
  ) {}

  render(model: monaco.editor.ITextModel, views: readonly HunkView[]): void {
    const seen = new Set<string>();
    const perLine = new Map<number, number>();
    // After the line's text, but never past the right edge of the editor: a long line would
    // take the buttons out of sight.
    const layout = this.editor.getLayoutInfo();
    const charWidth = this.editor.getOption(monaco.editor.EditorOption.fontInfo).typicalHalfwidthCharacterWidth;
    const maxColumn = Math.max(1, Math.floor((layout.contentWidth - layout.verticalScrollbarWidth) / charWidth) - 8);
    for (const view of views) {
      const span = hunkLineSpan(model, view);
      if (!span) continue;
      seen.add(view.hunkId);
      const slot = perLine.get(span.first) ?? 0;
      perLine.set(span.first, slot + 1);
      const at = { lineNumber: span.first, column: Math.min(model.getLineMaxColumn(span.first), maxColumn) };
      const margin = `${16 + slot * widgetSpacingPx}px`;
      const existing = this.widgets.get(view.hunkId);
      if (!existing) {
        const widget = this.create(view.hunkId, at);
        widget.node.style.marginLeft = margin;
        this.widgets.set(view.hunkId, widget);
        this.editor.addContentWidget(widget);
        continue;
      }
      if (existing.node.style.marginLeft !== margin) existing.node.style.marginLeft = margin;
      if (existing.at.lineNumber !== at.lineNumber || existing.at.column !== at.column) {
        existing.at = at;
        this.editor.layoutContentWidget(existing);
      }
    }
    for (const [hunkId, widget] of this.widgets) {
      if (seen.has(hunkId)) continue;
      this.editor.removeContentWidget(widget);
      this.widgets.delete(hunkId);
    }
  }

  private create(hunkId: string, at: monaco.IPosition): HunkWidget {
    const node = document.createElement('div');
    node.className = 'flint-hunk-actions';
    node.append(
      this.button('✓', 'hunk-accept', `Accept this change (${this.shortcuts.accept} with the caret in it)`, 'flint-hunk-accept', () => this.actions.accept(hunkId)),
      this.button('✕', 'hunk-reject', 'Reject this change: put the original back', 'flint-hunk-reject', () => this.actions.reject(hunkId)),
    );
    const widget: HunkWidget = {
      node,
      at,
      getId: () => `flint.hunk.${hunkId}`,
      getDomNode: () => node,
      getPosition: () => ({ position: widget.at, preference: [monaco.editor.ContentWidgetPositionPreference.EXACT] }),
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
  }

  dispose(): void {
    this.clear();
  }
}
