import { defineConfig } from 'vitest/config';

// Tiers are chosen by suffix: *.test.ts (pure), *.int.test.ts (real NATS/Postgres/kernel),
// *.e2e.test.ts (the whole pipeline).
export const config = defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['libs/**/*.test.ts', 'services/**/*.test.ts', 'test/**/*.test.ts'], exclude: ['**/node_modules/**', '**/*.int.test.ts', '**/*.e2e.test.ts'] },
      },
      { extends: true, test: { name: 'int', include: ['**/*.int.test.ts'], exclude: ['**/node_modules/**'], globalSetup: ['test/setup/build-dist.ts'], testTimeout: 60_000, hookTimeout: 60_000 } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.e2e.test.ts'], exclude: ['**/node_modules/**'], testTimeout: 180_000, hookTimeout: 120_000, fileParallelism: false } },
    ],
  },
});

// vitest loads the default export of its config file.
// eslint-disable-next-line no-restricted-syntax
export default config;
