/**
 * Sizes of the built web app (apps/web/dist): what the first page load needs (index.html, the
 * entry script, its CSS and the chunks it imports statically) and what loads lazily (dynamic
 * import(): the workspace and Monaco; workers; Monaco's language grammars), raw and gzip -9.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface BundleFile {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export interface BundleSizes {
  initial: BundleFile[];
  lazy: BundleFile[];
  initialTotal: { bytes: number; gzipBytes: number };
  lazyTotal: { bytes: number; gzipBytes: number };
  /** Lazily loaded chunks grouped by role. */
  lazyGroups: Array<{ group: string; files: number; bytes: number; gzipBytes: number }>;
}

const sizeOf = (dist: string, file: string): BundleFile => {
  const data = readFileSync(join(dist, file));
  return { file, bytes: data.length, gzipBytes: gzipSync(data, { level: 9 }).length };
};

const sum = (files: BundleFile[]) => files.reduce((t, f) => ({ bytes: t.bytes + f.bytes, gzipBytes: t.gzipBytes + f.gzipBytes }), { bytes: 0, gzipBytes: 0 });

export function measureBundle(dist: string): BundleSizes {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const entries = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  const initialSet = new Set<string>(['index.html', ...entries]);
  // Static imports of the entry (and of what it imports) load before the app runs.
  const queue = entries.filter((f) => f.endsWith('.js'));
  while (queue.length > 0) {
    const file = queue.pop()!;
    const source = readFileSync(join(dist, file), 'utf8');
    for (const match of source.matchAll(/(?:^|[;\n}])\s*import\s*(?:[\w$*{}\s,]+from\s*)?["'`]\.\/([^"'`]+\.js)["'`]/g)) {
      const target = `assets/${match[1]!}`;
      if (!initialSet.has(target)) {
        initialSet.add(target);
        queue.push(target);
      }
    }
  }
  const assets = readdirSync(join(dist, 'assets'))
    .map((name) => `assets/${name}`)
    .filter((file) => statSync(join(dist, file)).isFile());
  const initial = [...initialSet].map((file) => sizeOf(dist, file));
  const lazy = assets.filter((file) => !initialSet.has(file)).map((file) => sizeOf(dist, file));
  const groupOf = (file: string) =>
    /\.worker-/.test(file)
      ? 'web workers (Monaco language services)'
      : /Workspace-|editor\.api-|editor-|lspLanguageFeatures|Mode-/.test(file)
        ? 'workspace + Monaco editor (loaded on opening a workspace)'
        : /\.(ttf|woff2?|css)$/.test(file)
          ? 'fonts and other CSS'
          : 'Monaco language grammars (one per language, on demand)';
  const groups = new Map<string, BundleFile[]>();
  for (const file of lazy) groups.set(groupOf(file.file), [...(groups.get(groupOf(file.file)) ?? []), file]);
  return {
    initial,
    lazy: lazy.sort((a, b) => b.gzipBytes - a.gzipBytes),
    initialTotal: sum(initial),
    lazyTotal: sum(lazy),
    lazyGroups: [...groups].map(([group, files]) => ({ group, files: files.length, ...sum(files) })),
  };
}
