import { describe, expect, it } from 'vitest';
import { assertSchemaName } from '@slicemesh/db';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import type { EndpointSlice } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import { compareSliceTables, scratchSchemaName } from './replay.ts';

const slice = (name: string, ips: readonly string[], annotations?: Record<string, string>): EndpointSlice => {
  const s = makeSlice(name, ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })));
  return deepFreeze(annotations ? { ...s, metadata: { ...s.metadata, annotations } } : s);
};
const table = (...slices: EndpointSlice[]): Map<string, EndpointSlice> => new Map(slices.map((s) => [`default/${s.metadata.name}`, s]));

describe('compareSliceTables', () => {
  it('equal tables: no problems', () => expect(compareSliceTables(table(slice('a', ['10.0.0.1'])), table(slice('a', ['10.0.0.1'])))).toEqual([]));
  it('the trigger-time annotation is not compared (it depends on which syncs a process saw)', () => {
    expect(compareSliceTables(table(slice('a', ['10.0.0.1'], { [ANNOTATION_TRIGGER_TIME]: '2026-01-01T00:00:00Z' })), table(slice('a', ['10.0.0.1'])))).toEqual([]);
  });
  it('a live slice the replay lacks, an extra replayed slice and a differing slice are each named', () => {
    const problems = compareSliceTables(table(slice('a', ['10.0.0.1']), slice('b', ['10.0.0.2'])), table(slice('b', ['10.0.0.3']), slice('c', ['10.0.0.4'])));
    expect(problems).toHaveLength(3);
    expect(problems[0]).toBe('slice default/a is live but the replay did not produce it');
    expect(problems[1]).toMatch(/^slice default\/b differs: live .*10\.0\.0\.2.* replayed .*10\.0\.0\.3/);
    expect(problems[2]).toBe('the replay produced slice default/c, which is not live');
  });
  it('two empty tables are equal', () => expect(compareSliceTables(new Map(), new Map())).toEqual([]));
});

describe('scratchSchemaName', () => {
  it('derives a valid schema name of at most 63 characters from any live schema', () => {
    for (const live of ['slicemesh', 'slicemesh_lx3f9a00ff10', `s${'x'.repeat(62)}`]) {
      const name = scratchSchemaName(live, 'abcdef');
      expect(() => assertSchemaName(name)).not.toThrow();
      expect(name.endsWith('_replay_abcdef')).toBe(true);
    }
  });
});
