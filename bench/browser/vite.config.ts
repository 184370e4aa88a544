/**
 * B5's control pages, built like the IDE (same Monaco, same workers, same alias) so the only
 * difference under test is how the stream reaches the editor. `floor.html`: receives the
 * stream and nothing else (the transport floor). `naive.html`: applies every token to Monaco
 * the moment it arrives, one edit per token. B6 in the browser: `yjs.html` (the same Monaco
 * with y-monaco and a y-websocket provider: the reference Yjs stack) and `chat.html` (a key
 * sent as one raw WebSocket message: the floor). Built into bench/browser/dist on demand.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root,
  logLevel: 'warn',
  resolve: {
    alias: [{ find: /^monaco-editor\/esm\/vs\/(.*)$/, replacement: 'monaco-editor/$1' }],
  },
  worker: { format: 'es' },
  build: {
    outDir: resolve(root, 'dist'),
    emptyOutDir: true,
    chunkSizeWarningLimit: 8_000,
    reportCompressedSize: false,
    rollupOptions: {
      input: { floor: resolve(root, 'floor.html'), naive: resolve(root, 'naive.html'), yjs: resolve(root, 'yjs.html'), chat: resolve(root, 'chat.html') },
    },
  },
});
