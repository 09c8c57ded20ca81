import { describe, expect, it } from 'vitest';
import { ConfigError } from '@slicemesh/runtime';
import { localClusterReplicas, natsSettingsConflict, parseNatsClusterSize, parseRunDuration, stackConfig } from './config.ts';

describe('--duration', () => {
  const cases = [
    { name: 'plain seconds', text: '30', want: 30_000 },
    { name: 'a duration', text: '2m', want: 120_000 },
    { name: '0 runs until Ctrl-C', text: '0', want: 0 },
    { name: 'fractions through the duration syntax', text: '1.5s', want: 1500 },
  ];
  for (const tc of cases) it(tc.name, () => expect(parseRunDuration(tc.text)).toBe(tc.want));
  it('anything else is rejected', () => expect(() => parseRunDuration('soon')).toThrow(/not a duration/));
});

describe('stack settings', () => {
  it('defaults: local servers, the default scenario at speed 1, one agent per node, in-process, fresh state cleaned up', () => {
    expect(stackConfig.parse([], {})).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4222', databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres', scenario: undefined, speed: 1,
      simPort: 8001, cluster: 'local', partitions: 2, agents: 'node', processes: false, keepState: false, cleanup: true, duration: 0, verify: false,
      summaryInterval: 5000, runDir: '.slicemesh/run', batchPeriod: 100,
    });
  });

  it('NATS_URL and DATABASE_URL come from the environment; flags win', () => {
    const c = stackConfig.parse(['--nats-url', 'nats://flag:4222', '--duration', '20', '--processes'], { NATS_URL: 'nats://env:4222', DATABASE_URL: 'postgres://u@db:5432/x' });
    expect(c).toMatchObject({ natsUrl: 'nats://flag:4222', databaseUrl: 'postgres://u@db:5432/x', duration: 20_000, processes: true });
  });

  const bad = [
    { name: 'an unknown agent mode', argv: ['--agents', 'pod'], flag: '--agents' },
    { name: 'a non-positive speed', argv: ['--speed', '0'], flag: '--speed' },
    { name: 'an unknown flag', argv: ['--turbo'], flag: '--turbo' },
  ];
  for (const tc of bad) {
    it(`rejects ${tc.name}, naming the flag`, () => {
      const err = (() => {
        try {
          stackConfig.parse(tc.argv, {});
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain(tc.flag);
    });
  }
});

describe('--nats-cluster', () => {
  it('is 1 (no servers of its own) by default, and takes 3 to 7 servers', () => {
    expect(stackConfig.parse([], {}).natsCluster).toBe(1);
    expect(stackConfig.parse(['--nats-cluster', '3'], {}).natsCluster).toBe(3);
    for (const n of [1, 3, 5, 7]) expect(parseNatsClusterSize(String(n))).toBe(n);
  });
  it('refuses 2 (no quorum with either lost), 0, 8, and anything not a whole number, naming the flag', () => {
    expect(() => parseNatsClusterSize('2')).toThrow(/quorum/);
    for (const bad of ['0', '8', '3.5', 'three', '']) expect(() => parseNatsClusterSize(bad), bad).toThrow(/1 \(a single server\) or a number of servers from 3 to 7/);
    expect(() => stackConfig.parse(['--nats-cluster', '2'], {})).toThrow(/--nats-cluster/);
  });
  it('every stream and bucket gets 3 replicas on a cluster of 3 or more', () => {
    expect([3, 4, 5, 7].map(localClusterReplicas)).toEqual([3, 3, 3, 3]);
  });
  const conflictCases: { name: string; argv: string[]; want: RegExp | undefined }[] = [
    { name: 'a local cluster with an explicit --nats-url', argv: ['--nats-cluster', '3', '--nats-url', 'nats://x:4222'], want: /--nats-cluster 3 starts its own 3 nats-servers, so --nats-url cannot be given with it/ },
    { name: 'a local cluster with --nats-url=', argv: ['--nats-cluster', '3', '--nats-url=nats://x:4222'], want: /--nats-url cannot be given/ },
    { name: 'locked down (the default) against servers of yours without their keys', argv: ['--nats-url', 'nats://x:4222'], want: /give --nats-auth-dir <dir> with their keys .*or --nats-auth none/ },
    { name: 'keys of your servers with a local cluster', argv: ['--nats-cluster', '3', '--nats-auth-dir', '/k'], want: /--nats-auth-dir cannot be given with it/ },
    { name: 'keys with --nats-auth none', argv: ['--nats-auth', 'none', '--nats-auth-dir', '/k'], want: /cannot go with --nats-auth none/ },
    { name: 'your servers without credentials', argv: ['--nats-url', 'nats://x:4222', '--nats-auth', 'none'], want: undefined },
    { name: 'your locked-down servers with their keys', argv: ['--nats-url', 'nats://x:4222', '--nats-auth-dir', '/k'], want: undefined },
    { name: 'a locked-down local cluster', argv: ['--nats-cluster', '3'], want: undefined },
    { name: 'the default: its own locked-down server (NATS_URL from the environment gives way)', argv: [], want: undefined },
  ];
  for (const tc of conflictCases) {
    it(`NATS settings: ${tc.name} ${tc.want === undefined ? 'run' : 'conflict'}`, () => {
      const c = stackConfig.parse(tc.argv, { NATS_URL: 'nats://env:4222' });
      const got = natsSettingsConflict(tc.argv, c);
      if (tc.want === undefined) expect(got).toBeUndefined();
      else expect(got).toMatch(tc.want);
    });
  }
  it('--nats-url takes a server list and names a bad entry', () => {
    expect(stackConfig.parse(['--nats-url', 'nats://a:4222,nats://b:4222'], {}).natsUrl).toBe('nats://a:4222,nats://b:4222');
    expect(() => stackConfig.parse(['--nats-url', 'nats://a:4222,foo bar'], {})).toThrow(/--nats-url/);
  });
});
