import type { monaco } from './monacoSetup';

interface SuggestModelInternals {
  _refilterCompletionItems?: () => void;
}

/**
 * Monaco's suggest session re-filters on every content change of the model — and so re-renders
 * its list and asks the TypeScript worker again for the focused item's details — including a
 * collaborator's or the agent's edits far from the caret: ~60 times a second while the agent
 * streams (B5 found this to be most of what typing costs meanwhile). A re-filter depends only
 * on the caret's position and the text of its line, so when neither changed since the last one
 * it would show the same list: this skips it. It patches SuggestModel's internal method on this
 * editor's instance; if Monaco ever changes it, the patch does nothing and suggestions work
 * as before.
 */
export function quietSuggest(editor: monaco.editor.IStandaloneCodeEditor): void {
  const controller = editor.getContribution('editor.contrib.suggestController') as { model?: SuggestModelInternals } | null;
  const model = controller?.model;
  const refilter = model?._refilterCompletionItems;
  if (!model || typeof refilter !== 'function') return;
  let last: string | null = null;
  model._refilterCompletionItems = function (this: SuggestModelInternals) {
    const position = editor.getPosition();
    const text = editor.getModel();
    const key = position && text ? `${text.id}:${position.lineNumber}:${position.column}:${text.getLineContent(position.lineNumber)}` : null;
    if (key !== null && key === last) return;
    last = key;
    refilter.call(this);
  };
}
