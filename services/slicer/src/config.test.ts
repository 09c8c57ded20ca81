import { describe, expect, it } from 'vitest';
import { ConfigError, parseOwnedPartitions } from '@slicemesh/runtime';
import { defaultDurablePrefix, resolveSlicerSettings, slicerConfig, slicerConfigWith, slicerConsumers, slicerDurables } from './config.ts';

describe('slicer settings', () => {
  it('documents upstream-like defaults (batch period 0, 5 workers, 100 endpoints per slice)', () => {
    const c = slicerConfig.parse([], {});
    expect(c).toMatchObject({
      cluster: 'local',
      partitions: 1,
      ownedPartitions: 'all',
      dbSchema: 'slicemesh',
      maxEndpointsPerSlice: 100,
      managedBy: 'endpointslice-controller.k8s.io',
      batchPeriod: 0,
      workers: 5,
      kubeStream: 'KUBE',
      slicesStream: 'SLICES',
      dlqStream: 'DLQ',
      eventsStream: 'EVENTS',
      subjectPrefix: '',
      ackWait: 30_000,
    });
    expect(slicerConfig.usage()).toContain('--max-endpoints-per-slice <int>  (env MAX_ENDPOINTS_PER_SLICE; default 100; min 1; max 1000)');
    expect(slicerConfig.usage()).toContain('--batch-period <duration>  (env BATCH_PERIOD; default 0;');
  });

  const cases: readonly { name: string; argv?: readonly string[]; env?: Record<string, string>; want?: Record<string, unknown>; error?: RegExp }[] = [
    { name: 'flags override env', argv: ['--workers', '7'], env: { WORKERS: '3' }, want: { workers: 7 } },
    { name: 'env overrides defaults', env: { BATCH_PERIOD: '100ms', CLUSTER: 'c1', PARTITIONS: '8' }, want: { batchPeriod: 100, cluster: 'c1', partitions: 8 } },
    { name: 'A.8.1 max endpoints per slice below 1 is refused', argv: ['--max-endpoints-per-slice', '0'], error: /below the minimum 1/ },
    { name: 'A.8.1 max endpoints per slice above 1000 is refused', env: { MAX_ENDPOINTS_PER_SLICE: '1001' }, error: /above the maximum 1000/ },
    { name: 'an invalid managed-by label value is refused', argv: ['--managed-by', 'not a label!'], error: /--managed-by/ },
    { name: 'an invalid schema name is refused', env: { DB_SCHEMA: 'Bad-Schema' }, error: /invalid schema name/ },
    { name: 'a subject prefix must be dot-terminated tokens', argv: ['--subject-prefix', 'stage'], error: /dot-terminated/ },
    { name: 'owned partitions accept lists and ranges', env: { OWNED_PARTITIONS: '5,0-2' }, want: { ownedPartitions: [0, 1, 2, 5] } },
    { name: 'owned partitions refuse garbage', env: { OWNED_PARTITIONS: 'one' }, error: /not a partition number/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const run = () => slicerConfig.parse(tc.argv ?? [], tc.env ?? {});
      if (tc.error) expect(run).toThrow(tc.error);
      else expect(run()).toMatchObject(tc.want ?? {});
    });
  }
});

describe('resolveSlicerSettings', () => {
  it('owns every partition by default and names streams and durables', () => {
    expect(resolveSlicerSettings(slicerConfigWith({ partitions: 3, cluster: 'c1', subjectPrefix: 't1.' }))).toEqual({
      names: { kube: 'KUBE', slices: 'SLICES', dlq: 'DLQ', events: 'EVENTS', prefix: 't1.' },
      partitions: [0, 1, 2],
      durablePrefix: 'slicer-c1',
    });
  });

  it('refuses owned partitions outside 0..PARTITIONS-1 with a ConfigError', () => {
    expect(() => resolveSlicerSettings(slicerConfigWith({ partitions: 2, ownedPartitions: [1, 2] }))).toThrow(ConfigError);
  });

  const prefixes = [
    { cluster: 'prod-eu_1', want: 'slicer-prod-eu_1' },
    { cluster: 'my.cluster', want: /^slicer-c[0-9a-f]{8}$/ },
    { cluster: '', want: /^slicer-c[0-9a-f]{8}$/ },
  ];
  for (const tc of prefixes) it(`durable prefix for ${JSON.stringify(tc.cluster)} uses only [A-Za-z0-9_-]`, () => expect(defaultDurablePrefix(tc.cluster)).toMatch(tc.want));

  it('parseOwnedPartitions dedupes and sorts; "all" stays all', () => {
    expect(parseOwnedPartitions('3,1,1-2')).toEqual([1, 2, 3]);
    expect(parseOwnedPartitions(' all ')).toBe('all');
    expect(() => parseOwnedPartitions('4-2')).toThrow(/empty/);
  });
});

describe('slicerConsumers', () => {
  const names = { kube: 'KUBE', slices: 'SLICES', dlq: 'DLQ', prefix: 't1.' };
  it("each owned partition's own durable and its node durable, with filters and offset names, in slicerDurables' order", () => {
    const got = slicerConsumers('c1', names, 'slicer-c1', [0, 3]);
    expect(got).toEqual([
      { partition: 0, nodes: false, durable: 'slicer-c1-p0', filterSubject: 't1.kube.c1.0.>', offset: 'KUBE/slicer-c1-p0' },
      { partition: 0, nodes: true, durable: 'slicer-c1-p0-nodes', filterSubject: 't1.kube.c1.node.>', offset: 'KUBE/slicer-c1-p0-nodes' },
      { partition: 3, nodes: false, durable: 'slicer-c1-p3', filterSubject: 't1.kube.c1.3.>', offset: 'KUBE/slicer-c1-p3' },
      { partition: 3, nodes: true, durable: 'slicer-c1-p3-nodes', filterSubject: 't1.kube.c1.node.>', offset: 'KUBE/slicer-c1-p3-nodes' },
    ]);
    expect(got.map((c) => c.durable)).toEqual(slicerDurables('slicer-c1', [0, 3]));
  });
});
