import { describe, expect, it } from 'vitest';
import { ConfigError } from '@slicemesh/runtime';
import { hintsConfig, hintsConfigWith } from './config.ts';

describe('hintsConfig', () => {
  it('has documented defaults for every setting', () => {
    const c = hintsConfig.parse([], {});
    expect(c).toMatchObject({
      cluster: 'local',
      dbSchema: 'slicemesh',
      kubeStream: 'KUBE',
      slicesStream: 'SLICES',
      dlqStream: 'DLQ',
      subjectPrefix: '',
      svcBucket: 'svc',
      viewsBucket: 'views',
      batchPeriod: 0,
      workers: 16,
      ingestBatch: 256,
      preferSameTrafficDistribution: true,
      logLevel: 'info',
    });
    for (const field of Object.values(hintsConfig.spec)) expect(field.doc.length).toBeGreaterThan(10);
    expect(hintsConfig.usage()).toContain('BATCH_PERIOD');
  });

  const cases: { name: string; argv: string[]; env: Record<string, string>; check: (c: ReturnType<typeof hintsConfig.parse>) => unknown; want: unknown }[] = [
    { name: 'env sets the gate off', argv: [], env: { PREFER_SAME_TRAFFIC_DISTRIBUTION: 'false' }, check: (c) => c.preferSameTrafficDistribution, want: false },
    { name: 'a flag overrides env', argv: ['--cluster', 'c2'], env: { CLUSTER: 'c1' }, check: (c) => c.cluster, want: 'c2' },
    { name: 'durations parse to ms', argv: ['--batch-period=1s'], env: {}, check: (c) => c.batchPeriod, want: 1000 },
    { name: 'a test prefix is accepted', argv: [], env: { SUBJECT_PREFIX: 'tabc.' }, check: (c) => c.subjectPrefix, want: 'tabc.' },
  ];
  for (const tc of cases) it(tc.name, () => expect(tc.check(hintsConfig.parse(tc.argv, tc.env))).toEqual(tc.want));

  const bad: { name: string; env: Record<string, string> }[] = [
    { name: 'a stream name with a dot', env: { KUBE_STREAM: 'KU.BE' } },
    { name: 'a prefix without the trailing dot', env: { SUBJECT_PREFIX: 't1' } },
    { name: 'an unknown log level', env: { LOG_LEVEL: 'loud' } },
    { name: 'zero workers', env: { WORKERS: '0' } },
  ];
  for (const tc of bad) it(`rejects ${tc.name}`, () => expect(() => hintsConfig.parse([], tc.env)).toThrow(ConfigError));

  it('hintsConfigWith overrides defaults', () => {
    expect(hintsConfigWith({ cluster: 'x' }).cluster).toBe('x');
    expect(hintsConfigWith().cluster).toBe('local');
  });
});
