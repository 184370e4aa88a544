import { Completer, completionSourceOf, type EditorState, type FlintClient, type Suggestion } from '@flint/client';
import { FILE_TEXT_KEY } from '@flint/protocol';
import { MonacoBinding } from 'y-monaco';
import type * as Y from 'yjs';
import { reportAutocompleteStats, useAutocomplete } from '../stores/autocompleteStore';
import { selectCanEdit, useConnection } from '../stores/connectionStore';
import { useWorkspace } from '../stores/workspaceStore';
import type { ModelRegistry } from './ModelRegistry';
import { monaco } from './monacoSetup';

/** Characters of context the Completer compares between keystrokes (the gateway reads its own copy). */
const prefixChars = 1024;
const suffixChars = 512;

const timers = {
  setTimeout: (fn: () => void, ms: number) => window.setTimeout(fn, ms),
  clearTimeout: (handle: unknown) => window.clearTimeout(handle as number),
  now: () => performance.now(),
};

/**
 * Ghost-text autocomplete in the editor, for the person typing in this tab only: local typing
 * (this tab's y-monaco binding) drives a Completer; its suggestion is offered to Monaco as an
 * inline completion. Tab accepts it, Ctrl/Cmd-Right its next word, Esc dismisses it; typing its
 * characters keeps it. Remote edits and cursor moves dismiss it. Nothing of it reaches the doc
 * until accepted, so collaborators never see it.
 */
export class AutocompleteController {
  private readonly completer: Completer;
  private readonly ghostKey: monaco.editor.IContextKey<boolean>;
  private watched: Y.Text | null = null;
  private editPending = false;
  /** The key of the keystroke being handled was a plain Tab: what it inserts is indentation, not typing. */
  private tabKeyDown = false;
  /** The editor's list-as-you-type setting; off while ghost text shows. */
  private readonly quickSuggestions: monaco.editor.IQuickSuggestionsOptions;
  private readonly disposers: Array<() => void> = [];

  constructor(
    private readonly editor: monaco.editor.IStandaloneCodeEditor,
    private readonly registry: ModelRegistry,
    client: FlintClient,
  ) {
    this.completer = new Completer({
      source: completionSourceOf(client),
      timers,
      onSuggestion: (suggestion) => this.show(suggestion),
      onStats: reportAutocompleteStats,
    });
    this.ghostKey = editor.createContextKey('flintGhostText', false);
    this.quickSuggestions = editor.getOption(monaco.editor.EditorOption.quickSuggestions);
    editor.updateOptions({ inlineSuggest: { enabled: true, showToolbar: 'never' } });
    const provider = monaco.languages.registerInlineCompletionsProvider('*', {
      displayName: 'Flint autocomplete',
      debounceDelayMs: 0,
      // The suggest widget wins over ghost text (VS Code's rule): while it is open, Tab is its.
      provideInlineCompletions: (model, position, context) => ({ items: context.selectedSuggestionInfo ? [] : this.itemsAt(model, position) }),
      disposeInlineCompletions: () => undefined,
    });
    const listeners = [
      editor.onDidChangeModel(() => this.watch()),
      editor.onDidChangeCursorPosition(() => {
        // A local edit reports itself once its change events settled (see `onText`).
        if (this.editPending) return;
        const state = this.state();
        if (state) this.completer.cursorMoved(state);
        else this.completer.dismiss();
      }),
      editor.onDidBlurEditorText(() => this.completer.dismiss()),
      editor.onKeyDown((event) => {
        // Runs before the key's command; cleared once the keystroke's edits are done.
        if (event.keyCode !== monaco.KeyCode.Tab || event.ctrlKey || event.altKey || event.metaKey || this.ghostKey.get()) return;
        this.tabKeyDown = true;
        // A task, not a microtask: the key's command runs in a later listener of the same event.
        window.setTimeout(() => (this.tabKeyDown = false), 0);
      }),
    ];
    // The suggest widget wins over ghost text: once its list opens, Tab is its, and a ghost
    // text that extends the highlighted item would be inserted along with it. Monaco has no
    // public event for the list; its SuggestModel's (as in quietSuggest) is used when there.
    const suggest = editor.getContribution('editor.contrib.suggestController') as { model?: { onDidTrigger?: monaco.IEvent<unknown> } } | null;
    const listOpened = suggest?.model?.onDidTrigger?.(() => this.completer.dismiss());
    if (listOpened) listeners.push(listOpened);
    const apply = () => this.completer.setEnabled(useAutocomplete.getState().enabled && selectCanEdit(useConnection.getState()));
    this.disposers.push(
      () => provider.dispose(),
      () => listeners.forEach((listener) => listener.dispose()),
      useAutocomplete.subscribe((state, previous) => state.enabled !== previous.enabled && apply()),
      useConnection.subscribe(apply),
    );
    apply();
    this.addKeys();
    this.watch();
  }

  private addKeys(): void {
    const { KeyMod, KeyCode } = monaco;
    const when = 'flintGhostText && inlineSuggestionVisible && editorTextFocus && !suggestWidgetVisible';
    const actions = [
      this.editor.addAction({ id: 'flint.autocomplete.accept', label: 'AI: Accept the Suggestion', keybindings: [KeyCode.Tab], precondition: when, run: () => this.accept('all') }),
      this.editor.addAction({ id: 'flint.autocomplete.acceptWord', label: 'AI: Accept the Next Word of the Suggestion', keybindings: [KeyMod.CtrlCmd | KeyCode.RightArrow], precondition: when, run: () => this.accept('word') }),
      this.editor.addAction({ id: 'flint.autocomplete.dismiss', label: 'AI: Dismiss the Suggestion', keybindings: [KeyCode.Escape], precondition: 'flintGhostText && editorTextFocus', run: () => this.completer.dismiss() }),
    ];
    this.disposers.push(() => actions.forEach((action) => action.dispose()));
  }

  private accept(part: 'all' | 'word'): void {
    const position = this.editor.getPosition();
    const text = this.completer.accept(part);
    const model = this.editor.getModel();
    if (text === null || !position || !model) return;
    const offset = model.getOffsetAt(position);
    this.editor.executeEdits('flint-autocomplete', [{ range: monaco.Range.fromPositions(position), text, forceMoveMarkers: true }]);
    this.editor.setPosition(model.getPositionAt(offset + text.length));
    this.editor.pushUndoStop();
  }

  private itemsAt(model: monaco.editor.ITextModel, position: monaco.Position): monaco.languages.InlineCompletion[] {
    const suggestion = this.completer.suggestion;
    if (!suggestion || model !== this.editor.getModel() || this.registry.fileIdOf(model) !== suggestion.fileId) return [];
    if (model.getOffsetAt(position) !== suggestion.index) return [];
    return [{ insertText: suggestion.text, range: monaco.Range.fromPositions(position) }];
  }

  private show(suggestion: Suggestion | null): void {
    const showing = suggestion !== null;
    if (showing !== this.ghostKey.get()) {
      this.ghostKey.set(showing);
      // One suggestion at a time. Monaco waits for ghost text before it opens its list on its
      // own, but a keystroke's re-query can come back empty for a moment, and a list that opens
      // then takes the Tab meant for the ghost. Monaco reads this option as the list would open.
      this.editor.updateOptions({ quickSuggestions: showing ? false : this.quickSuggestions });
    }
    // Monaco asks providers on its own only as the user types; a suggestion that arrives later
    // needs an explicit trigger.
    if (suggestion) this.editor.trigger('flint-autocomplete', 'editor.action.inlineSuggest.trigger', {});
    else this.editor.trigger('flint-autocomplete', 'editor.action.inlineSuggest.hide', null);
  }

  private watch(): void {
    this.watched?.unobserve(this.onText);
    this.watched = null;
    this.completer.dismiss();
    const model = this.editor.getModel();
    const fileId = model ? this.registry.fileIdOf(model) : null;
    const handle = fileId === null ? null : this.registry.handleFor(fileId);
    if (!handle) return;
    this.watched = handle.doc.getText(FILE_TEXT_KEY);
    this.watched.observe(this.onText);
  }

  /**
   * Typing in this tab arrives through its y-monaco binding; anything else (collaborators, the
   * agent, undo) is not typing, and neither is the indentation of a Tab key. Reported once the keystroke's changes and cursor move are done.
   */
  private readonly onText = (_event: Y.YTextEvent, transaction: Y.Transaction): void => {
    if (!(transaction.origin instanceof MonacoBinding) || this.editPending) return;
    this.editPending = true;
    const indent = this.tabKeyDown;
    queueMicrotask(() => {
      this.editPending = false;
      const state = this.state();
      if (indent) this.completer.indented();
      else if (state) this.completer.edited(state);
      else this.completer.dismiss();
    });
  };

  /** The cursor and the text around it; null with a selection or no file. */
  private state(): EditorState | null {
    const model = this.editor.getModel();
    const selection = this.editor.getSelection();
    const fileId = model ? this.registry.fileIdOf(model) : null;
    if (!model || !selection || !selection.isEmpty() || fileId === null) return null;
    const position = selection.getPosition();
    const index = model.getOffsetAt(position);
    const before = model.getPositionAt(Math.max(0, index - prefixChars));
    const after = model.getPositionAt(index + suffixChars);
    return {
      fileId,
      index,
      prefix: model.getValueInRange(monaco.Range.fromPositions(before, position)),
      suffix: model.getValueInRange(monaco.Range.fromPositions(position, after)),
      openFileIds: useWorkspace.getState().tabs.filter((id) => id !== fileId),
    };
  }

  dispose(): void {
    this.watched?.unobserve(this.onText);
    this.completer.dispose();
    for (const dispose of this.disposers) dispose();
  }
}
