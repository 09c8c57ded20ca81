// One lint configuration for the whole monorepo (flat config).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Pure libraries: no drivers, no clock, no I/O.
    files: ['libs/{model,slicing,topology,proxy-state,dataplane}/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@nats-io/*', 'kysely', 'pg', '@kubernetes/client-node', 'node:*', '!node:crypto', 'fs', 'child_process', 'net', 'http'], message: 'Pure libraries import no driver and do no I/O.' },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Pass time in; pure libraries have no clock.' },
        { object: 'Math', property: 'random', message: 'Pure libraries are deterministic.' },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'process'],
      'no-console': 'error',
    },
  },
);
