import { readFile, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/** Where `npm run dev` sends /ws and /api: a gateway started with `npm start` (PORT 3000). */
const gatewayUrl = process.env.FLINT_GATEWAY_URL ?? 'http://127.0.0.1:3000';

/**
 * The IDE runs its own TypeScript worker (src/editor/typescript.worker.ts, decision 0009),
 * handed to Monaco by `MonacoEnvironment.getWorker`, which Monaco asks first. Monaco's TypeScript
 * support still names its own worker as a fallback, and Vite would bundle that too: 6.6 MB
 * nobody loads. The fallback is replaced by an error that says where the worker comes from.
 */
function ownTypeScriptWorker(): Plugin {
  const fallback = `new Worker(new URL('ts.worker.js', import.meta.url), { type: "module" })`;
  return {
    name: 'flint-own-typescript-worker',
    enforce: 'pre',
    transform(code, id) {
      if (!id.replace(/\\/g, '/').endsWith('/languages/features/typescript/workerManager.js')) return null;
      if (!code.includes(fallback)) {
        this.warn("Monaco's TypeScript worker fallback changed shape; its worker is bundled again (unused)");
        return null;
      }
      return code.replace(fallback, `(() => { throw new Error('Flint creates the TypeScript worker in MonacoEnvironment.getWorker (src/editor/monacoSetup.ts)'); })()`);
    },
  };
}

const compressible = new Set(['.js', '.mjs', '.css', '.html', '.svg', '.json', '.wasm', '.map', '.ttf']);
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * Writes `<file>.br` and `<file>.gz` beside each text-like file of the build, compressed once at
 * the highest levels, for the gateway to send as they are (it picks one by Accept-Encoding). A
 * variant that comes out no smaller than its file is not written, so the file itself is sent.
 */
function precompressed(): Plugin {
  return {
    name: 'flint-precompressed',
    apply: 'build',
    async writeBundle(output, bundle) {
      const outDir = output.dir;
      if (outDir === undefined) return this.error('precompressed() needs the build to write to a folder (build.outDir)');
      const files = Object.keys(bundle).filter((name) => compressible.has(extname(name)));
      await Promise.all(
        files.map(async (name) => {
          const path = join(outDir, name);
          const content = await readFile(path);
          const [br, gz] = await Promise.all([
            brotli(content, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: content.length } }),
            gzipped(content, { level: constants.Z_BEST_COMPRESSION }),
          ]);
          if (br.length < content.length) await writeFile(`${path}.br`, br);
          if (gz.length < content.length) await writeFile(`${path}.gz`, gz);
        }),
      );
    },
  };
}

export default defineConfig({
  plugins: [react(), ownTypeScriptWorker(), precompressed()],
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
