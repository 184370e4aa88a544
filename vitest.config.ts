import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/gateway/src/**/*.test.ts', 'apps/web/src/**/*.test.ts', 'scripts/**/*.test.ts', 'models/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
  },
});
