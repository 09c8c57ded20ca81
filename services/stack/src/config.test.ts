import { describe, expect, it } from 'vitest';
import { ConfigError } from '@slicemesh/runtime';
import { parseRunDuration, stackConfig } from './config.ts';

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
