import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** Where `npm run dev` sends /ws and /api: a gateway started with `npm start` (PORT 3000). */
const gatewayUrl = process.env.FLINT_GATEWAY_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: [
      // y-monaco imports `monaco-editor/esm/vs/...`, which monaco-editor >= 0.56 no longer
      // exports; its exports map `monaco-editor/<path>` to `esm/vs/<path>.js`. Both spellings
      // must land on the same file, or y-monaco and the app would hold two Monaco instances.
      { find: /^monaco-editor\/esm\/vs\/(.*)$/, replacement: 'monaco-editor/$1' },
    ],
  },
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Monaco and the TypeScript worker are several MB by nature; they load once and are cached.
    chunkSizeWarningLimit: 8_000,
    reportCompressedSize: false,
  },
  server: {
    proxy: {
      '/api': gatewayUrl,
      '/ws': { target: gatewayUrl, ws: true },
    },
  },
});
