import { describe, expect, it } from 'vitest';
import { DEFAULT_PORT, parseMainOptions, UsageError } from './options.ts';

describe('parseMainOptions', () => {
  it('defaults: port 8001, localhost, 10s bookmarks, 10000 events, speed 1, info logs, Events kept 1h, MCS API served', () => {
    expect(parseMainOptions([], {})).toEqual({ port: DEFAULT_PORT, host: '127.0.0.1', bookmarkIntervalMs: 10_000, historySize: 10_000, speed: 1, logLevel: 'info', eventTTLMs: 3_600_000, mcsApi: true });
  });

  it('--no-mcs-api (or CLUSTER_SIM_MCS_API=false) simulates a cluster without the MCS CRDs', () => {
    expect(parseMainOptions(['--no-mcs-api'], {}).mcsApi).toBe(false);
    expect(parseMainOptions([], { CLUSTER_SIM_MCS_API: 'false' }).mcsApi).toBe(false);
    expect(parseMainOptions(['--no-mcs-api'], { CLUSTER_SIM_MCS_API: 'true' }).mcsApi).toBe(false);
    expect(() => parseMainOptions([], { CLUSTER_SIM_MCS_API: 'no' })).toThrow(/CLUSTER_SIM_MCS_API/);
  });

  it('--event-ttl takes a duration, 0 keeps Events forever', () => {
    expect(parseMainOptions(['--event-ttl', '90s'], {}).eventTTLMs).toBe(90_000);
    expect(parseMainOptions([], { CLUSTER_SIM_EVENT_TTL: '0' }).eventTTLMs).toBe(0);
  });

  it('flags win over environment variables', () => {
    const o = parseMainOptions(['--port', '0', '--scenario', 'x.yaml', '--bookmark-interval', '1s'], { CLUSTER_SIM_PORT: '9000', CLUSTER_SIM_SEED: 's', CLUSTER_SIM_HISTORY: '50' });
    expect(o).toMatchObject({ port: 0, scenario: 'x.yaml', seed: 's', bookmarkIntervalMs: 1000, historySize: 50 });
  });

  const bad: readonly [string[], string][] = [
    [['--port', 'http'], '--port'],
    [['--port', '70000'], '--port'],
    [['--bookmark-interval', '0s'], '--bookmark-interval'],
    [['--speed', '-1'], '--speed'],
    [['--log-level', 'loud'], '--log-level'],
    [['--event-ttl', 'soon'], '--event-ttl'],
    [['--nope'], 'nope'],
  ];
  for (const [argv, mention] of bad) {
    it(`rejects ${argv.join(' ')}`, () => {
      expect(() => parseMainOptions(argv, {})).toThrow(UsageError);
      expect(() => parseMainOptions(argv, {})).toThrow(mention);
    });
  }
});
