/**
 * The lint step (`npm run lint`): import direction and layering rules from STYLE.md, and no
 * import cycles. Reads sources as text: fast, no dependency, and a rule CI runs is a rule.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const roots = ['packages', 'apps'].flatMap((dir) =>
  readdirSync(join(root, dir)).flatMap((name) => ['src', 'test'].map((folder) => join(root, dir, name, folder))).filter(existsSync),
);
/** Hosts of the gateway outside it: they reach it through its package entries only. */
const hosts = ['bench', 'e2e'].map((dir) => join(root, dir));

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

const importPattern = /(?:^|\n)\s*(?:import|export)\s([^'"]*?)from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;

/** Imports of a file; `typeOnly` ones vanish at runtime and cannot form a load-order cycle. */
function importsOf(source: string): Array<{ specifier: string; typeOnly: boolean }> {
  const found: Array<{ specifier: string; typeOnly: boolean }> = [];
  for (const match of source.matchAll(importPattern)) {
    const specifier = (match[2] ?? match[3] ?? match[4])!;
    found.push({ specifier, typeOnly: match[1]?.trimStart().startsWith('type ') ?? false });
  }
  return found;
}

interface Rule {
  applies: (file: string) => boolean;
  /** Type-only imports count too (a boundary of names, not only of load order). */
  types?: boolean;
  check: (specifier: string, source: string) => string | null;
}

const rel = (file: string) => relative(root, file);
/** Tests, and test support (a package's or app's test/ folder: harnesses, fakes, corpora). */
const isTest = (file: string) => /\.test\.tsx?$/.test(file) || /^(apps|packages)\/[^/]+\/test\//.test(rel(file));
const nodeBuiltin = (s: string) => s.startsWith('node:') || ['fs', 'path', 'http', 'https', 'net', 'crypto', 'os', 'child_process'].includes(s);

const rules: Rule[] = [
  {
    // protocol and stream-diff are pure: no workspace imports, no Node.
    applies: (f) => /packages\/(protocol|stream-diff)\/src\//.test(rel(f)) && !isTest(f),
    check: (s) => (s.startsWith('@flint/') || nodeBuiltin(s) ? `pure package imports "${s}"` : null),
  },
  {
    // The patch reader is pure too, but for protocol's path rules.
    applies: (f) => /packages\/patch-reader\/src\//.test(rel(f)) && !isTest(f),
    check: (s) => ((s.startsWith('@flint/') && s !== '@flint/protocol') || nodeBuiltin(s) ? `pure package imports "${s}"` : null),
  },
  {
    applies: (f) => rel(f).startsWith('packages/'),
    check: (s) => (/^@flint\/(gateway|web)$/.test(s) || s.includes('/apps/') ? `a package imports an app ("${s}")` : null),
  },
  {
    // The gateway core takes sockets, clocks and stores from outside.
    applies: (f) => rel(f).startsWith('apps/gateway/src/core/') && !isTest(f),
    check: (s) =>
      ['ws', 'http', 'node:http', 'node:https', 'better-sqlite3', 'node:net'].includes(s) || s.includes('/transport/')
        ? `gateway core imports "${s}"`
        : null,
  },
  {
    // Ports (core/ports/) are declared for the core; adapters implement them. Core never names an
    // adapter, not even a type: storage, models, project, cluster and transport depend on core.
    applies: (f) => rel(f).startsWith('apps/gateway/src/core/') && !isTest(f),
    types: true,
    check: (s) => (/^(\.\.\/)+(storage|models|project|cluster|transport)\//.test(s) ? `gateway core imports the adapter "${s}" (name a port in core/ports/)` : null),
  },
  {
    // The kernel (core/'s own files: Gateway, Session, Room, LiveDoc, …) calls features through the
    // Extension interface and never imports one. The features registered as extensions so far
    // (search, completion, the agent's inline turns and its thread):
    applies: (f) => /^apps\/gateway\/src\/core\/[^/]+\.ts$/.test(rel(f)) && !isTest(f),
    types: true,
    check: (s) => (/^\.\/(search|complete|agent|thread)\//.test(s) ? `the kernel imports the extension "${s}" (register it in index.ts instead)` : null),
  },
  {
    // A port names only other ports and the protocol's types.
    applies: (f) => rel(f).startsWith('apps/gateway/src/core/ports/'),
    types: true,
    check: (s) => (s.startsWith('./') || s === '@flint/protocol' ? null : `a port imports "${s}"`),
  },
  {
    // What ships never leans on test support: src/ (tests aside) imports nothing from a test/ folder.
    applies: (f) => /^(apps|packages)\/[^/]+\/src\//.test(rel(f)) && !isTest(f),
    types: true,
    check: (s) => (/(^|\/)test\//.test(s) ? `production code imports test support "${s}"` : null),
  },
  {
    // bench/ and e2e/ compose the gateway through its public face (src/index.ts, `@flint/gateway`)
    // and its documented test entry (`@flint/gateway/testing`), never its internals.
    applies: (f) => /^(bench|e2e)\//.test(rel(f)),
    types: true,
    check: (s) => (/(^|\/)apps\/gateway\/src\//.test(s) ? `reaches into the gateway ("${s}"): import @flint/gateway or @flint/gateway/testing` : null),
  },
  {
    // React components use packages/client through stores and hooks, never the wire.
    applies: (f) => rel(f).startsWith('apps/web/src/components/'),
    check: (s) => (['@flint/client', 'y-protocols/sync', 'ws'].includes(s) ? `a component imports "${s}"` : null),
  },
];

const sourceRules: Array<{ applies: (file: string) => boolean; pattern: RegExp; message: string }> = [
  {
    applies: (f) => rel(f).startsWith('apps/gateway/src/core/') && !isTest(f) && !f.endsWith('/Clock.ts'),
    pattern: /process\.env|(?<![.\w])set(Timeout|Interval)\(/,
    message: 'gateway core reads process.env or uses global timers (inject a Clock)',
  },
  {
    applies: (f) => rel(f).startsWith('apps/gateway/src/core/') && !isTest(f),
    pattern: /\b(randomBytes|randomUUID|randomInt|getRandomValues)\(|Math\.random\(/,
    message: 'gateway core makes its own randomness (inject a Random: core/ports/Random.ts)',
  },
];

const problems: string[] = [];
const graph = new Map<string, string[]>();

function resolveImport(from: string, specifier: string): string | null {
  let base: string;
  if (specifier.startsWith('.')) base = resolve(dirname(from), specifier);
  else if (specifier.startsWith('@flint/')) base = join(root, 'packages', specifier.slice(7), 'src', 'index');
  else return null;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

for (const file of [...roots, ...hosts].flatMap(walk)) {
  const source = readFileSync(file, 'utf8');
  const edges: string[] = [];
  for (const { specifier, typeOnly } of importsOf(source)) {
    for (const rule of rules) {
      // Types vanish at runtime: a component may name a client type without using the wire.
      if (!rule.applies(file) || (typeOnly && !rule.types)) continue;
      const problem = rule.check(specifier, source);
      if (problem) problems.push(`${rel(file)}: ${problem}`);
    }
    const target = resolveImport(file, specifier);
    if (target && !typeOnly) edges.push(target);
  }
  for (const rule of sourceRules) {
    if (rule.applies(file) && rule.pattern.test(source)) problems.push(`${rel(file)}: ${rule.message}`);
  }
  graph.set(file, edges);
}

// Cycle detection over runtime imports (colouring DFS).
const state = new Map<string, 'visiting' | 'done'>();
function visit(file: string, stack: string[]): void {
  state.set(file, 'visiting');
  stack.push(file);
  for (const next of graph.get(file) ?? []) {
    if (state.get(next) === 'visiting') {
      const cycle = stack.slice(stack.indexOf(next)).concat(next).map(rel);
      problems.push(`import cycle: ${cycle.join(' → ')}`);
    } else if (!state.has(next)) visit(next, stack);
  }
  stack.pop();
  state.set(file, 'done');
}
for (const file of graph.keys()) if (!state.has(file)) visit(file, []);

if (problems.length > 0) {
  console.error(`Boundary check failed (${problems.length}):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`Boundary check: ${graph.size} files, no layering violations, no import cycles.`);
