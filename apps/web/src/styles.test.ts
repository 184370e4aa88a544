import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transform } from 'lightningcss';
import { expect, it } from 'vitest';

/**
 * Sections of the stylesheet are appended by several features at once; a merge that drops a
 * closing brace nests every later rule in the section before it, and Vite's minifier (lightningcss)
 * then refuses the file — `npm start` would fail to build (found by the attack run).
 */
it("the web app's stylesheet parses as Vite's build minifies it, every section closed", () => {
  const code = readFileSync(join(__dirname, 'styles.css'));
  expect(() => transform({ filename: 'styles.css', code, minify: true })).not.toThrow();
  let depth = 0;
  for (const ch of code.toString().replace(/\/\*[\s\S]*?\*\//g, '')) {
    depth += ch === '{' ? 1 : ch === '}' ? -1 : 0;
    expect(depth).toBeGreaterThanOrEqual(0);
  }
  expect(depth).toBe(0);
});
