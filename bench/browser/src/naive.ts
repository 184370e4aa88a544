import { editorOptions, monaco } from '../../../apps/web/src/editor/monacoSetup';
import { params, streamFromRelay } from './relay';
import { benchFileText, benchRegionStartLine } from './benchFile';

/**
 * The naive harness: every token becomes its own Monaco edit the moment it arrives, at an
 * insertion point that moves with the text (and with the user's typing above it). No
 * coalescing, no diff, no document: what a simple "stream into the editor" loop does.
 */
const { relay, lines } = params();
const model = monaco.editor.createModel(benchFileText(lines), 'typescript', monaco.Uri.parse('file:///main.ts'));
const editor = monaco.editor.create(document.getElementById('editor')!, { ...editorOptions, model });

let insertAt = model.getOffsetAt({ lineNumber: benchRegionStartLine, column: 1 });
let applying = false;
model.onDidChangeContent((event) => {
  if (applying) return;
  for (const change of event.changes) if (change.rangeOffset < insertAt) insertAt += change.text.length - change.rangeLength;
});

window.__benchStart = (tokens) =>
  streamFromRelay(relay, tokens, (text) => {
    const at = model.getPositionAt(insertAt);
    applying = true;
    model.applyEdits([{ range: new monaco.Range(at.lineNumber, at.column, at.lineNumber, at.column), text }]);
    applying = false;
    insertAt += text.length;
  });
void editor;
