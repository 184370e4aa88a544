import { hunksOf, viewHunks, type HunkView } from '@flint/change-set';
import { FILE_TEXT_KEY } from '@flint/protocol';
import * as Y from 'yjs';
import { agentShortcuts } from '../stores/agentMessages';
import { reviewFile, reviewHunk, selectStreamingTurn, setReviewProblems, setReviewSummary, stopStreamingIn, useAgent } from '../stores/agentStore';
import { selectThreadWritingIn, useThread } from '../stores/threadStore';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { AgentDecorations, hunkLineSpan } from './AgentDecorations';
import { ChangeSetProblems } from './ChangeSetProblems';
import { HunkWidgets } from './HunkWidgets';
import { InlinePrompt } from './InlinePrompt';
import type { ModelRegistry } from './ModelRegistry';
import { monaco } from './monacoSetup';
import type { ProblemsDiff } from './problemsDiff';

/**
 * While the agent writes into the file on screen, as-you-type suggestions wait for this pause in
 * typing (trigger characters and Ctrl+Space still open them at once). Each request makes the
 * TypeScript worker re-parse a file that changes every frame, and on a small machine that work
 * takes frames from the stream (decision 0007).
 */
const streamingSuggestDelayMs = 300;

interface Watched {
  fileId: string;
  model: monaco.editor.ITextModel;
  doc: Y.Doc;
  text: Y.Text;
}

/**
 * The agent in the editor: the Ctrl/Cmd-K prompt, the live diff of pending hunks, per-hunk
 * review widgets, and the keys for review and interrupt. It watches the file on screen; text
 * and hunk changes (the agent flushes every ~8 ms while streaming) are rendered at most once
 * per animation frame, and only the active file is ever drawn.
 */
export class AgentController {
  private readonly decorations: AgentDecorations;
  private readonly widgets: HunkWidgets;
  private readonly prompt: InlinePrompt;
  private readonly problems = new ChangeSetProblems((fileId, diff) => this.publishProblems(fileId, diff));
  /** Where the problems the pending changes added are, kept as the text changes. */
  private problemAnchors: Y.RelativePosition[] = [];
  private readonly inPendingHunk: monaco.editor.IContextKey<boolean>;
  private readonly hasPendingHunks: monaco.editor.IContextKey<boolean>;
  private readonly turnStreaming: monaco.editor.IContextKey<boolean>;
  private watched: Watched | null = null;
  /** The hunks this tab may review now, as of the last frame. */
  private reviewable: HunkView[] = [];
  private frame: number | null = null;
  /** Monaco's own as-you-type suggestion delay, restored when the agent stops. */
  private readonly suggestDelayMs: number;
  private suggestionsWait = false;
  private readonly disposers: Array<() => void> = [];

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    private readonly registry: ModelRegistry,
  ) {
    this.decorations = new AgentDecorations(editor);
    this.widgets = new HunkWidgets(editor, { accept: (id) => this.review('accept', id), reject: (id) => this.review('reject', id) }, { accept: agentShortcuts.acceptHunk });
    this.prompt = new InlinePrompt(editor);
    this.inPendingHunk = editor.createContextKey('flintInPendingHunk', false);
    this.hasPendingHunks = editor.createContextKey('flintHasPendingHunks', false);
    this.turnStreaming = editor.createContextKey('flintTurnStreaming', false);
    this.suggestDelayMs = editor.getOption(monaco.editor.EditorOption.quickSuggestionsDelay);
    const listeners = [
      editor.onDidChangeModel(() => this.watch()),
      editor.onDidChangeCursorPosition(() => this.updateCaretKey()),
    ];
    this.disposers.push(
      () => listeners.forEach((listener) => listener.dispose()),
      useAgent.subscribe((state, previous) => {
        if (state.turns === previous.turns) return;
        this.updateStreaming();
        this.schedule();
      }),
      // A thread turn writes in this file too: its hunks are not reviewed while they grow.
      useThread.subscribe((state, previous) => {
        if (state.turns === previous.turns) return;
        this.updateStreaming();
        this.schedule();
      }),
      useConnection.subscribe((state, previous) => {
        if (selectCanEdit(state) !== selectCanEdit(previous)) this.schedule();
        if (!selectCanEdit(state)) this.prompt.close(false);
      }),
      useAgent.subscribe((state, previous) => {
        const request = state.revealRequest;
        if (request && request !== previous.revealRequest && request.fileId === this.watched?.fileId) this.revealProblem(request.problem);
      }),
    );
    this.addCommands();
    this.watch();
  }

  /**
   * Editor actions rather than bare commands: they are disposed with the controller, and show
   * in the command palette (F1) only when they apply. When two bindings of a key apply, the
   * later one wins: Esc stops the agent before it closes the prompt.
   */
  private addCommands(): void {
    const { KeyMod, KeyCode } = monaco;
    const actions: monaco.editor.IActionDescriptor[] = [
      { id: 'flint.agent.prompt', label: 'AI: Edit Selection with an Instruction', keybindings: [KeyMod.CtrlCmd | KeyCode.KeyK], precondition: 'editorTextFocus', run: () => this.openPrompt() },
      {
        id: 'flint.agent.acceptHunk',
        label: 'AI: Accept the Change at the Caret',
        keybindings: [KeyCode.Tab],
        precondition: 'flintInPendingHunk && editorTextFocus && !suggestWidgetVisible && !inSnippetMode && !inlineSuggestionVisible',
        run: () => this.acceptAtCaret(),
      },
      { id: 'flint.agent.acceptAll', label: 'AI: Accept All Changes', keybindings: [KeyMod.CtrlCmd | KeyCode.Enter], precondition: 'flintHasPendingHunks && editorTextFocus && !suggestWidgetVisible', run: () => this.review('accept') },
      { id: 'flint.agent.rejectAll', label: 'AI: Reject All Changes', keybindings: [KeyMod.CtrlCmd | KeyMod.Shift | KeyCode.Backspace], precondition: 'flintHasPendingHunks && editorTextFocus', run: () => this.review('reject') },
      { id: 'flint.agent.closePrompt', label: 'AI: Close the Prompt', keybindings: [KeyCode.Escape], precondition: 'flintPromptOpen && editorTextFocus && !suggestWidgetVisible', run: () => this.prompt.close(true, true) },
      {
        id: 'flint.agent.stop',
        label: 'AI: Stop Writing',
        keybindings: [KeyCode.Escape],
        precondition: 'flintTurnStreaming && editorTextFocus && !suggestWidgetVisible && !parameterHintsVisible',
        run: () => void stopStreamingIn(this.watched?.fileId ?? ''),
      },
    ];
    const registered = actions.map((action) => this.editor.addAction(action));
    this.disposers.push(() => registered.forEach((action) => action.dispose()));
    // Outside the editor (the tree, the page), Esc still stops the agent and Ctrl/Cmd-K still
    // prompts, instead of the browser's own Ctrl-K.
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || this.editor.getContainerDomNode().contains(event.target as Node)) return;
      const target = event.target as HTMLElement | null;
      if (target?.closest('input, textarea, select, [contenteditable="true"], [role="dialog"]')) return;
      if (event.key === 'Escape' && !event.ctrlKey && !event.metaKey && !event.altKey) {
        if (this.watched && stopStreamingIn(this.watched.fileId)) event.preventDefault();
      } else if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.code === 'KeyK') {
        event.preventDefault();
        this.openPrompt();
      }
    };
    window.addEventListener('keydown', onKeyDown);
    this.disposers.push(() => window.removeEventListener('keydown', onKeyDown));
  }

  private openPrompt(): void {
    const watched = this.watched;
    const selection = this.editor.getSelection();
    if (!watched || !selection || !selectCanEdit(useConnection.getState())) return;
    if (!this.registry.handleFor(watched.fileId)?.synced) return;
    this.prompt.open(watched.fileId, selection);
  }

  private watch(): void {
    const model = this.editor.getModel();
    const fileId = model ? this.registry.fileIdOf(model) : null;
    if (this.watched?.model === model && this.watched?.fileId === fileId) return;
    this.unwatch();
    this.decorations.clear();
    this.widgets.clear();
    const handle = fileId === null ? null : this.registry.handleFor(fileId);
    if (model && fileId !== null && handle) {
      const text = handle.doc.getText(FILE_TEXT_KEY);
      this.watched = { fileId, model, doc: handle.doc, text };
      text.observe(this.schedule);
      hunksOf(handle.doc).observe(this.schedule);
    }
    this.schedule();
  }

  private unwatch(): void {
    if (!this.watched) return;
    this.watched.text.unobserve(this.schedule);
    hunksOf(this.watched.doc).unobserve(this.schedule);
    this.watched = null;
  }

  private updateStreaming(): void {
    const fileId = this.watched?.fileId ?? null;
    const writing = fileId !== null && (selectStreamingTurn(useAgent.getState(), fileId) !== null || selectThreadWritingIn(useThread.getState(), fileId) !== null);
    this.turnStreaming.set(writing && selectCanEdit(useConnection.getState()));
  }

  private readonly schedule = (): void => {
    this.frame ??= requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
  };

  private render(): void {
    const watched = this.watched;
    // A rename swaps the model under us without a model change event for this controller.
    if (!watched || watched.model !== this.editor.getModel() || watched.model.isDisposed()) {
      this.reviewable = [];
      this.updateKeys(false);
      setReviewSummary(null);
      this.problems.update(null);
      return;
    }
    const views = viewHunks(watched.doc, watched.text);
    const inline = selectStreamingTurn(useAgent.getState(), watched.fileId);
    const thread = selectThreadWritingIn(useThread.getState(), watched.fileId);
    const streaming = inline ?? thread;
    this.decorations.render(watched.model, views);
    // A hunk still being written can still grow; it is reviewed once its turn stops. The record
    // says so itself (`writing`), in the same update as its text: the turn's status may come later.
    this.reviewable = selectCanEdit(useConnection.getState())
      ? views.filter((view) => !view.record.writing && view.record.turnId !== inline?.turnId && view.record.turnId !== thread?.turnId)
      : [];
    this.widgets.render(watched.model, this.reviewable);
    this.updateKeys(streaming !== null && selectCanEdit(useConnection.getState()));
    setReviewSummary({ fileId: watched.fileId, reviewable: this.reviewable.length });
    const settled = streaming === null && this.reviewable.length > 0;
    this.problems.update(settled ? { fileId: watched.fileId, model: watched.model, doc: watched.doc, hunkIds: this.reviewable.map((view) => view.hunkId) } : null);
  }

  /** `diff` is of the text as it is now (ChangeSetProblems checks that before it publishes). */
  private publishProblems(fileId: string | null, diff: ProblemsDiff | null): void {
    const watched = this.watched?.fileId === fileId ? this.watched : null;
    if (fileId === null || !diff || !watched) {
      this.problemAnchors = [];
      return setReviewProblems(null);
    }
    this.problemAnchors = diff.added.map((problem) => Y.createRelativePositionFromTypeIndex(watched.text, problem.start));
    const added = diff.added.map((problem) => ({ ...problem, line: watched.model.getPositionAt(problem.start).lineNumber }));
    setReviewProblems({ fileId, added, fixed: diff.fixed });
  }

  private revealProblem(index: number): void {
    const watched = this.watched;
    const anchor = this.problemAnchors[index];
    if (!watched || !anchor || watched.model.isDisposed()) return;
    const at = Y.createAbsolutePositionFromRelativePosition(anchor, watched.doc);
    if (!at) return;
    const position = watched.model.getPositionAt(at.index);
    this.editor.setPosition(position);
    this.editor.revealPositionInCenterIfOutsideViewport(position);
    this.editor.focus();
  }

  private updateKeys(streaming: boolean): void {
    this.hasPendingHunks.set(this.reviewable.length > 0);
    this.turnStreaming.set(streaming);
    if (streaming !== this.suggestionsWait) {
      this.suggestionsWait = streaming;
      this.editor.updateOptions({ quickSuggestionsDelay: streaming ? streamingSuggestDelayMs : this.suggestDelayMs });
    }
    this.updateCaretKey();
  }

  private hunkAtCaret(): HunkView | null {
    const position = this.editor.getPosition();
    const model = this.watched?.model;
    if (!position || !model) return null;
    for (const view of this.reviewable) {
      const span = hunkLineSpan(model, view);
      if (span && position.lineNumber >= span.first && position.lineNumber <= span.last) return view;
    }
    return null;
  }

  private updateCaretKey(): void {
    this.inPendingHunk.set(this.hunkAtCaret() !== null);
  }

  private acceptAtCaret(): void {
    const view = this.hunkAtCaret();
    if (view) this.review('accept', view.hunkId);
  }

  /** One hunk, or (no id) every reviewable hunk of the file; never a hunk still being written. */
  private review(action: 'accept' | 'reject', hunkId?: string): void {
    const watched = this.watched;
    if (!watched) return;
    if (hunkId !== undefined) reviewHunk(watched.fileId, action, hunkId);
    else reviewFile(watched.fileId, action);
  }

  dispose(): void {
    if (this.frame !== null) cancelAnimationFrame(this.frame);
    this.unwatch();
    this.prompt.dispose();
    this.problems.dispose();
    setReviewProblems(null);
    this.widgets.dispose();
    this.decorations.dispose();
    for (const dispose of this.disposers) dispose();
    setReviewSummary(null);
  }
}
