/**
 * The TypeScript worker the IDE runs (monacoSetup.ts): Monaco's, with the incremental host.
 * Mirrors Monaco's own worker entry, which builds its worker on the first message.
 */
import { initialize } from 'monaco-editor/internal/common/initialize';
import { IncrementalTypeScriptWorker } from './IncrementalTypeScriptWorker';

self.onmessage = () => {
  initialize((context, createData) => new IncrementalTypeScriptWorker(context, createData));
};
