// One lint configuration for the whole monorepo (flat config).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'dist.building-*/**', 'dist.old-*/**', 'coverage/**'] },
  // The few plain JavaScript files (the CLI's bin, the image's health check) run on Node.
  { files: ['**/*.js'], languageOptions: { globals: { process: 'readonly', fetch: 'readonly', AbortSignal: 'readonly', URL: 'readonly' } } },
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
    files: ['libs/{model,core,slicing,topology,proxy-state,dataplane,multicluster}/src/**/*.ts'],
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
  {
    // The history engine reads files (node:fs, zlib) but reaches NATS and Postgres only through a
    // LogSource that a caller opens with @slicemesh/nats and @slicemesh/db.
    files: ['libs/history/src/**/*.ts', 'libs/history/testing/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['nats', 'kysely', 'pg', '@kubernetes/client-node', '@slicemesh/nats', '@slicemesh/db', '@slicemesh/kube'].map((name) => ({ name, message: 'libs/history is pure over a LogSource: the adapters open it.' })),
          patterns: [{ group: ['@nats-io/*'], message: 'libs/history reaches NATS only through a LogSource.' }],
        },
      ],
      'no-console': 'error',
    },
  },
  {
    // Closed adapters: services wire; only libs/nats, libs/db, libs/kube and libs/netfilter
    // touch drivers, and all SQL lives in libs/db. Tests may inspect the servers directly.
    files: ['services/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'nats', message: 'Services reach NATS through @slicemesh/nats.' },
            { name: 'kysely', message: 'Services reach Postgres through @slicemesh/db.' },
            { name: 'pg', message: 'Services reach Postgres through @slicemesh/db.' },
            { name: '@kubernetes/client-node', message: 'Services reach the Kubernetes API through @slicemesh/kube.' },
          ],
          patterns: [{ group: ['@nats-io/*'], message: 'Services reach NATS through @slicemesh/nats.' }],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
        {
          selector: "CallExpression[callee.property.name=/^(selectFrom|insertInto|deleteFrom|updateTable|mergeInto|replaceInto)$/]",
          message: 'SQL lives in @slicemesh/db: add a named query there.',
        },
        { selector: "TaggedTemplateExpression[tag.name='sql']", message: 'SQL lives in @slicemesh/db: add a named query there.' },
      ],
    },
  },
);
