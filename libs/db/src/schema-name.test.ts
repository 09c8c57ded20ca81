import { describe, expect, it } from 'vitest';
import { assertSchemaName } from './schema-name.ts';

describe('assertSchemaName', () => {
  const cases = [
    { name: 'accepts a lowercase identifier', schema: 'slicer_a1', ok: true },
    { name: 'rejects a leading digit', schema: '1abc', ok: false },
    { name: 'rejects a hyphen', schema: 'a-b', ok: false },
    { name: 'rejects names over 63 characters', schema: 'a'.repeat(64), ok: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      if (tc.ok) expect(() => assertSchemaName(tc.schema)).not.toThrow();
      else expect(() => assertSchemaName(tc.schema)).toThrow(/invalid schema name/);
    });
  }
});
