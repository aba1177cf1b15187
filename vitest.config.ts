import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // e2e tests share one two-machine world; files run in parallel workers but the world is set up once.
    pool: 'forks',
    maxWorkers: 2,
  },
});
