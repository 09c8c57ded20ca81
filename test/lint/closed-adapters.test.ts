// The lint rules that keep adapters closed must actually fire: each case lints a snippet as if it
// lived at `path` and expects exactly the listed rule ids.

import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

interface Case {
  readonly name: string;
  readonly path: string;
  readonly code: string;
  readonly rules: readonly string[];
}

const cases: readonly Case[] = [
  { name: 'a service may not import the NATS client', path: 'services/slicer/src/x.ts', code: "import { connect } from '@nats-io/transport-node';\nexport const c = connect;\n", rules: ['no-restricted-imports'] },
  { name: 'a service may not import kysely', path: 'services/hints/src/x.ts', code: "import { sql } from 'kysely';\nexport const s = sql;\n", rules: ['no-restricted-imports'] },
  { name: 'a service may not import the Kubernetes client', path: 'services/watcher/src/x.ts', code: "import { KubeConfig } from '@kubernetes/client-node';\nexport const k = KubeConfig;\n", rules: ['no-restricted-imports'] },
  { name: 'a service may not build a query', path: 'services/stack/src/x.ts', code: "export const q = (db: { selectFrom(t: string): unknown }) => db.selectFrom('outbox');\n", rules: ['no-restricted-syntax'] },
  { name: 'a service may not write a raw SQL template', path: 'services/stack/src/x.ts', code: 'declare const sql: (s: TemplateStringsArray) => unknown;\nexport const q = sql`select 1`;\n', rules: ['no-restricted-syntax'] },
  { name: 'a service imports the adapters', path: 'services/slicer/src/x.ts', code: "import { createDb } from '@slicemesh/db';\nexport const c = createDb;\n", rules: [] },
  { name: 'libs/db writes SQL', path: 'libs/db/src/x.ts', code: "import { sql } from 'kysely';\nexport const q = (db: { selectFrom(t: string): unknown }) => [db.selectFrom('outbox'), sql`select 1`];\n", rules: [] },
  { name: 'a service test may inspect the database', path: 'services/slicer/src/x.int.test.ts', code: "export const q = (db: { selectFrom(t: string): unknown }) => db.selectFrom('outbox');\n", rules: [] },
  { name: 'the pure core imports no driver', path: 'libs/core/src/x.ts', code: "import { sql } from 'kysely';\nexport const s = sql;\n", rules: ['no-restricted-imports'] },
  { name: 'the pure core has no clock', path: 'libs/core/src/x.ts', code: 'export const now = Date.now();\n', rules: ['no-restricted-properties'] },
  { name: 'the history engine reaches NATS only through a LogSource', path: 'libs/history/src/x.ts', code: "import { readStreamRange } from '@slicemesh/nats';\nexport const r = readStreamRange;\n", rules: ['no-restricted-imports'] },
  { name: 'the history engine imports no database', path: 'libs/history/src/x.ts', code: "import { createDb } from '@slicemesh/db';\nexport const c = createDb;\n", rules: ['no-restricted-imports'] },
  { name: 'the history engine reads files', path: 'libs/history/src/x.ts', code: "import { createReadStream } from 'node:fs';\nexport const r = createReadStream;\n", rules: [] },
];

describe('closed adapters and a pure core, enforced by lint', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const [result] = await eslint.lintText(tc.code, { filePath: tc.path });
      expect(result?.messages.map((m) => m.ruleId)).toEqual(tc.rules);
    });
  }
});
