import { describe, expect, it } from 'vitest';
import { mergeExports } from './merge-exports.ts';
import { record } from './test-records.ts';

describe('mergeExports (KEP-1645 conflict resolution)', () => {
  const cases = [
    {
      name: 'agreeing exports merge without conflicts, clusters in precedence order (oldest first)',
      records: [record('b', { exportedAt: '2026-01-02T00:00:00Z' }), record('a', { exportedAt: '2026-01-03T00:00:00Z' })],
      want: { clusters: ['b', 'a'], type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }], conflicts: [] as string[] },
    },
    {
      name: 'equal export times are ordered by cluster name',
      records: [record('z'), record('m')],
      want: { clusters: ['m', 'z'] },
    },
    {
      name: 'headlessness follows the oldest export, and the others are told',
      records: [record('new', { type: 'Headless', exportedAt: '2026-02-01T00:00:00Z' }), record('old')],
      want: { type: 'ClusterSetIP', conflicts: ["type: old's ClusterSetIP wins over new's Headless"] },
    },
    {
      name: 'session affinity follows the oldest export',
      records: [record('old', { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 60 }), record('young', { exportedAt: '2026-03-01T00:00:00Z' })],
      want: { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 60, conflicts: ["sessionAffinity: old's ClientIP (60 s) wins over young's None"] },
    },
    {
      name: 'ports are the union of the exports',
      records: [record('a'), record('b', { ports: [{ name: 'metrics', protocol: 'TCP', port: 9090 }] })],
      want: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }, { name: 'metrics', protocol: 'TCP', port: 9090 }], conflicts: [] as string[] },
    },
    {
      name: 'a port name with another number goes to the oldest export',
      records: [record('a'), record('b', { exportedAt: '2026-05-01T00:00:00Z', ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] })],
      want: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }], conflicts: ['port "http": http TCP/80 wins over b\'s http TCP/8080'] },
    },
    {
      name: 'the same protocol and number under another name goes to the oldest export',
      records: [record('a'), record('b', { exportedAt: '2026-05-01T00:00:00Z', ports: [{ name: 'web', protocol: 'TCP', port: 80 }] })],
      want: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }], conflicts: ["port TCP/80: http TCP/80 wins over b's web TCP/80"] },
    },
    {
      name: 'the same number over another protocol is a port of its own',
      records: [record('a'), record('b', { ports: [{ name: 'dns', protocol: 'UDP', port: 80 }] })],
      want: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }, { name: 'dns', protocol: 'UDP', port: 80 }], conflicts: [] as string[] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(mergeExports(tc.records)).toMatchObject(tc.want);
    });
  }

  it('refuses no exports, and exports of different Services', () => {
    expect(() => mergeExports([])).toThrow(/at least one export/);
    expect(() => mergeExports([record('a'), record('b', { name: 'other' })])).toThrow(/shop\/other is not shop\/cart/);
  });
});
