import type { DocHandle } from '@flint/client';
import * as Y from 'yjs';
import type { ModelRegistry } from './ModelRegistry';
import { monaco } from './monacoSetup';

type AgentState = { user?: { agent?: unknown }; selection?: { head?: unknown }; pending?: unknown };

/**
 * The model's text that arrived but is not committed to the document yet (the stream-diff waits
 * to see how it aligns with the original), drawn in place after the agent's cursor: its first
 * line as injected text, the others in a zone below. It comes with the agent's awareness state
 * (decision 0020), so it is replaced in the same frame as the text that commits it.
 */
export class ProvisionalText {
  private readonly collection: monaco.editor.IEditorDecorationsCollection;
  private watched: { handle: DocHandle; model: monaco.editor.ITextModel } | null = null;
  private zone: { id: string; lines: string; afterLineNumber: number; view: monaco.editor.IViewZone } | null = null;
  /** What is drawn: the injected first line and where (render skips a change that moves neither). */
  private drawn: { first: string; offset: number } | null = null;
  private readonly disposers: Array<() => void> = [];

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    private readonly registry: ModelRegistry,
  ) {
    this.collection = editor.createDecorationsCollection();
    const onModel = editor.onDidChangeModel(() => this.watch());
    this.disposers.push(() => onModel.dispose());
    this.watch();
  }

  private watch(): void {
    this.unwatch();
    // A new model is a new view: its decorations and zones start empty.
    this.drawn = null;
    this.zone = null;
    const model = this.editor.getModel();
    const fileId = model ? this.registry.fileIdOf(model) : null;
    const handle = fileId === null ? null : this.registry.handleFor(fileId);
    if (model && handle) {
      this.watched = { handle, model };
      handle.awareness.on('change', this.schedule);
    }
    this.schedule();
  }

  private unwatch(): void {
    this.watched?.handle.awareness.off('change', this.schedule);
    this.watched = null;
  }

  /**
   * At once, not at the next frame: the client applies a frame's remote text and cursors in one
   * task, so the text that commits provisional text and the provisional text's removal land in
   * the same paint (a frame later would show it twice for a frame).
   */
  private readonly schedule = (): void => this.render();

  /** The agent's provisional text and where it goes, if an agent is writing into this file. */
  private find(): { text: string; position: monaco.Position } | null {
    if (!this.watched) return null;
    const { handle, model } = this.watched;
    for (const raw of handle.awareness.getStates().values()) {
      const state = raw as AgentState;
      if (state.user?.agent !== true || typeof state.pending !== 'string' || state.pending === '') continue;
      const head = state.selection?.head;
      if (typeof head !== 'object' || head === null) continue;
      const at = Y.createAbsolutePositionFromRelativePosition(Y.createRelativePositionFromJSON(head), handle.doc);
      if (!at) continue;
      return { text: state.pending, position: model.getPositionAt(at.index) };
    }
    return null;
  }

  private render(): void {
    const found = this.find();
    const [first = '', ...rest] = found ? found.text.split('\n') : [];
    // Most awareness changes are people's cursors: the decoration stays as it is (setting it again
    // would have the editor lay out its lines again).
    const offset = found && this.watched ? this.watched.model.getOffsetAt(found.position) : -1;
    if (this.drawn?.first !== first || this.drawn.offset !== offset) this.setFirstLine(found, first);
    this.drawn = { first, offset };
    this.setZone(found && rest.length > 0 ? { lines: rest.join('\n'), afterLineNumber: found.position.lineNumber } : null);
  }

  private setFirstLine(found: { position: monaco.Position } | null, first: string): void {
    this.collection.set(
      found && first
        ? [{
            range: monaco.Range.fromPositions(found.position),
            options: { showIfCollapsed: true, after: { content: first, inlineClassName: 'flint-provisional' } },
          }]
        : [],
    );
  }

  /**
   * The zone below the cursor's line. While the text grows under the same line, its rows are
   * written in place: the editor lays the zone out again only when its row count changes, never
   * removes and re-adds it (which would lay out every visible line per token).
   */
  private setZone(want: { lines: string; afterLineNumber: number } | null): void {
    const zone = this.zone;
    if (zone?.lines === want?.lines && zone?.afterLineNumber === want?.afterLineNumber) return;
    if (zone && want && zone.afterLineNumber === want.afterLineNumber) {
      const rows = want.lines.split('\n');
      this.fillRows(zone.view.domNode, rows);
      zone.lines = want.lines;
      if (zone.view.heightInLines !== rows.length) {
        zone.view.heightInLines = rows.length;
        this.editor.changeViewZones((accessor) => accessor.layoutZone(zone.id));
      }
      return;
    }
    this.editor.changeViewZones((accessor) => {
      if (zone) accessor.removeZone(zone.id);
      if (!want) {
        this.zone = null;
        return;
      }
      const view = this.zoneFor(want.lines, want.afterLineNumber);
      this.zone = { ...want, view, id: accessor.addZone(view) };
    });
  }

  private zoneFor(text: string, afterLineNumber: number): monaco.editor.IViewZone {
    const rows = text.split('\n');
    const fontInfo = this.editor.getOption(monaco.editor.EditorOption.fontInfo);
    const domNode = document.createElement('div');
    domNode.className = 'flint-provisional-zone';
    Object.assign(domNode.style, { fontFamily: fontInfo.fontFamily, fontSize: `${fontInfo.fontSize}px`, lineHeight: `${fontInfo.lineHeight}px` });
    this.fillRows(domNode, rows);
    return { afterLineNumber, heightInLines: rows.length, domNode, suppressMouseDown: true };
  }

  /** The zone's rows, one per line of provisional text; rows already there are rewritten only where they changed. */
  private fillRows(domNode: HTMLElement, rows: readonly string[]): void {
    const lineHeight = `${this.editor.getOption(monaco.editor.EditorOption.fontInfo).lineHeight}px`;
    while (domNode.childElementCount > rows.length) domNode.lastElementChild!.remove();
    rows.forEach((line, i) => {
      let row = domNode.children[i] as HTMLElement | undefined;
      if (!row) {
        row = document.createElement('div');
        row.className = 'flint-provisional';
        row.style.height = lineHeight;
        domNode.append(row);
      }
      if (row.textContent !== line) row.textContent = line;
    });
  }

  dispose(): void {
    this.unwatch();
    this.collection.clear();
    this.drawn = null;
    this.setZone(null);
    for (const dispose of this.disposers) dispose();
  }
}
