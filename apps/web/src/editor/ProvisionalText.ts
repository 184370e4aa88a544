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
  private zone: { id: string; lines: string; afterLineNumber: number } | null = null;
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
    this.collection.set(
      found && first
        ? [{
            range: monaco.Range.fromPositions(found.position),
            options: { showIfCollapsed: true, after: { content: first, inlineClassName: 'flint-provisional' } },
          }]
        : [],
    );
    this.setZone(found && rest.length > 0 ? { lines: rest.join('\n'), afterLineNumber: found.position.lineNumber } : null);
  }

  private setZone(want: { lines: string; afterLineNumber: number } | null): void {
    if (this.zone?.lines === want?.lines && this.zone?.afterLineNumber === want?.afterLineNumber) return;
    this.editor.changeViewZones((accessor) => {
      if (this.zone) accessor.removeZone(this.zone.id);
      this.zone = want ? { ...want, id: accessor.addZone(this.zoneFor(want.lines, want.afterLineNumber)) } : null;
    });
  }

  private zoneFor(text: string, afterLineNumber: number): monaco.editor.IViewZone {
    const lines = text.split('\n');
    const fontInfo = this.editor.getOption(monaco.editor.EditorOption.fontInfo);
    const domNode = document.createElement('div');
    domNode.className = 'flint-provisional-zone';
    Object.assign(domNode.style, { fontFamily: fontInfo.fontFamily, fontSize: `${fontInfo.fontSize}px`, lineHeight: `${fontInfo.lineHeight}px` });
    for (const line of lines) {
      const row = document.createElement('div');
      row.className = 'flint-provisional';
      row.style.height = `${fontInfo.lineHeight}px`;
      row.textContent = line;
      domNode.append(row);
    }
    return { afterLineNumber, heightInLines: lines.length, domNode, suppressMouseDown: true };
  }

  dispose(): void {
    this.unwatch();
    this.collection.clear();
    this.setZone(null);
    for (const dispose of this.disposers) dispose();
  }
}
