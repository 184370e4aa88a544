// Runs only the model tests: `npx vitest run -c models/vitest.config.ts`.
// (`npm test` runs them once the root vitest.config.ts includes 'models/**/*.test.ts'.)
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['models/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
