import { MonacoBinding } from 'y-monaco';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { editorOptions, monaco } from '../../../apps/web/src/editor/monacoSetup';

/**
 * B6's reference in the browser: the same Monaco, bound to a Y.Doc by y-monaco, synced by a
 * y-websocket provider with the reference server (@y/websocket-server). `?seed=` text is
 * written once, by the first page, when the room is empty.
 */
const query = new URLSearchParams(location.search);
const doc = new Y.Doc();
const provider = new WebsocketProvider(query.get('server') ?? '', query.get('room') ?? 'b6', doc, { disableBc: true });
const text = doc.getText('content');
const model = monaco.editor.createModel('', 'typescript', monaco.Uri.parse('file:///main.ts'));
const editor = monaco.editor.create(document.getElementById('editor')!, { ...editorOptions, model });
new MonacoBinding(text, model, new Set([editor]), provider.awareness);
(globalThis as { __FLINT_EDITOR_PROBE__?: (e: typeof editor) => void }).__FLINT_EDITOR_PROBE__?.(editor);
provider.on('sync', (synced: boolean) => {
  const seed = query.get('seed');
  if (synced && seed && text.length === 0) text.insert(0, seed);
  (window as unknown as { __benchReady?: boolean }).__benchReady = synced;
});
