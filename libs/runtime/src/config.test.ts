import { describe, expect, expectTypeOf, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import { defineConfig, helpRequested } from './config.ts';
import type { FieldSpec } from './config.ts';
import { ConfigError } from './errors.ts';

const config = defineConfig({
  natsUrl: { env: 'NATS_URL', flag: '--nats-url', default: 'nats://127.0.0.1:4222', doc: 'NATS server to connect to.', parse: 'url' },
  workers: { env: 'WORKERS', flag: '--workers', default: 5, min: 1, max: 64, doc: 'Concurrent reconciles.', parse: 'int' },
  batch: { env: 'BATCH_PERIOD', flag: '--batch-period', default: '1s', max: 60_000, doc: 'Pod batching window.', parse: 'duration' },
  dryRun: { env: 'DRY_RUN', flag: '--dry-run', default: false, doc: 'Render rules without applying them.', parse: 'bool' },
  mode: { env: 'PROXY_MODE', flag: '--mode', default: 'iptables', choices: ['iptables', 'nftables', 'ipvs'], doc: 'Data-plane backend.', parse: 'string' },
  zone: { env: 'NODE_ZONE', flag: '--zone', optional: true, doc: 'Zone of this node.', parse: 'string' },
  cluster: { env: 'CLUSTER', flag: '--cluster', doc: 'Cluster name used in subjects.', parse: 'string' },
  partitions: {
    flag: '--partitions',
    default: '4',
    doc: 'Comma-separated partition ids.',
    parse: (s: string) => s.split(',').map((p) => {
      if (!/^\d+$/.test(p)) throw new Error(`bad partition ${JSON.stringify(p)}`);
      return Number(p);
    }),
  },
});

describe('defineConfig parse', () => {
  const base = { CLUSTER: 'east' };
  const defaults = { natsUrl: 'nats://127.0.0.1:4222', workers: 5, batch: 1000, dryRun: false, mode: 'iptables', zone: undefined, cluster: 'east', partitions: [4] };
  const cases: readonly { name: string; argv: readonly string[]; env: Readonly<Record<string, string | undefined>>; want: object | string }[] = [
    { name: 'uses defaults when neither flag nor env is set (string defaults are parsed)', argv: [], env: base, want: defaults },
    { name: 'env overrides the default', argv: [], env: { ...base, WORKERS: '8', BATCH_PERIOD: '500ms' }, want: { ...defaults, workers: 8, batch: 500 } },
    { name: 'a flag overrides env', argv: ['--workers', '3'], env: { ...base, WORKERS: '8' }, want: { ...defaults, workers: 3 } },
    { name: 'accepts --flag=value', argv: ['--nats-url=nats://nats:4222', '--batch-period=30s'], env: base, want: { ...defaults, natsUrl: 'nats://nats:4222', batch: 30_000 } },
    { name: 'the last occurrence of a flag wins', argv: ['--workers', '2', '--workers=7'], env: base, want: { ...defaults, workers: 7 } },
    { name: 'a bare bool flag means true and does not consume the next argument', argv: ['--dry-run', '--workers', '2'], env: base, want: { ...defaults, dryRun: true, workers: 2 } },
    { name: 'a bool flag takes =false', argv: ['--dry-run=false'], env: { ...base, DRY_RUN: 'true' }, want: defaults },
    { name: 'bool env accepts yes', argv: [], env: { ...base, DRY_RUN: 'yes' }, want: { ...defaults, dryRun: true } },
    { name: 'an empty env value counts as unset', argv: [], env: { ...base, WORKERS: '' }, want: defaults },
    { name: 'an optional field without default is undefined when unset, set when given', argv: ['--zone', 'zone-a'], env: base, want: { ...defaults, zone: 'zone-a' } },
    { name: 'a required field may come from its flag', argv: ['--cluster', 'west'], env: {}, want: { ...defaults, cluster: 'west' } },
    { name: 'a custom parser gets the raw text', argv: ['--partitions', '1,2,3'], env: base, want: { ...defaults, partitions: [1, 2, 3] } },
    { name: 'a choice is accepted', argv: ['--mode', 'nftables'], env: base, want: { ...defaults, mode: 'nftables' } },
    { name: 'a bad int flag names the flag, the value and the reason', argv: ['--workers', 'abc'], env: base, want: '--workers: "abc": not an integer' },
    { name: 'a bad env value names the env variable', argv: [], env: { ...base, WORKERS: '1.5' }, want: 'env WORKERS: "1.5": not an integer' },
    { name: 'a value below min is rejected', argv: ['--workers=0'], env: base, want: '--workers: 0 is below the minimum 1' },
    { name: 'a value above max is rejected', argv: ['--workers=65'], env: base, want: '--workers: 65 is above the maximum 64' },
    { name: 'duration bounds print as durations', argv: ['--batch-period', '2m'], env: base, want: '--batch-period: 2m is above the maximum 1m' },
    { name: 'a bare number is not a duration', argv: ['--batch-period', '100'], env: base, want: '--batch-period: "100": not a duration (e.g. 500ms, 1s, 2m, 1h30m)' },
    { name: 'a value outside choices lists them', argv: ['--mode', 'userspace'], env: base, want: '--mode: "userspace" is not one of iptables, nftables, ipvs' },
    { name: 'a bad url is rejected', argv: [], env: { ...base, NATS_URL: 'not a url' }, want: 'env NATS_URL: "not a url": not a URL' },
    { name: 'a bad bool is rejected', argv: ['--dry-run=maybe'], env: base, want: '--dry-run: "maybe": not a boolean (true or false)' },
    { name: 'a custom parser\'s reason is reported', argv: ['--partitions', '1,x'], env: base, want: '--partitions: "1,x": bad partition "x"' },
    { name: 'an unknown flag is an error', argv: ['--nope', '1'], env: base, want: '--nope: unknown flag (see --help)' },
    { name: 'an unknown flag is an error in = form too', argv: ['--nope=1'], env: base, want: '--nope: unknown flag (see --help)' },
    { name: 'a positional argument is an error', argv: ['extra'], env: base, want: 'extra: unexpected argument (settings are --flag value)' },
    { name: 'a single-dash flag is an error', argv: ['-w', '3'], env: base, want: '-w: unexpected argument (settings are --flag value)' },
    { name: 'a flag missing its value is an error', argv: ['--workers'], env: base, want: '--workers: needs a value' },
    { name: 'a missing required field names its flag and env', argv: [], env: {}, want: '--cluster: required (or env CLUSTER)' },
    { name: 'a value with a newline stays on one line', argv: ['--workers', '1\n2'], env: base, want: '--workers: "1\\n2": not an integer' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const argv = deepFreeze([...tc.argv]);
      const env = deepFreeze({ ...tc.env });
      if (typeof tc.want === 'string') {
        expect(() => config.parse(argv, env)).toThrow(ConfigError);
        expect(() => config.parse(argv, env)).toThrow(tc.want);
        try {
          config.parse(argv, env);
        } catch (e) {
          expect((e as Error).message).toBe(tc.want);
          expect((e as Error).message).not.toContain('\n');
        }
      } else {
        expect(config.parse(argv, env)).toEqual(tc.want);
      }
    });
  }

  it('returns a frozen object typed from the spec', () => {
    const c = config.parse([], { CLUSTER: 'east' });
    expect(Object.isFrozen(c)).toBe(true);
    expectTypeOf(c.workers).toEqualTypeOf<number>();
    expectTypeOf(c.batch).toEqualTypeOf<number>();
    expectTypeOf(c.dryRun).toEqualTypeOf<boolean>();
    expectTypeOf(c.natsUrl).toEqualTypeOf<string>();
    expectTypeOf(c.mode).toEqualTypeOf<'iptables' | 'nftables' | 'ipvs'>();
    expectTypeOf(c.zone).toEqualTypeOf<string | undefined>();
    expectTypeOf(c.partitions).toEqualTypeOf<number[]>();
  });
});

describe('defineConfig spec checks', () => {
  const cases: readonly { name: string; spec: Record<string, FieldSpec>; want: RegExp }[] = [
    { name: 'rejects a default that does not parse, naming it', spec: { a: { flag: '--a', default: 'soon', doc: 'x', parse: 'duration' } }, want: /^default of --a: "soon": not a duration/ },
    { name: 'rejects a typed default out of range', spec: { a: { env: 'A', default: 0, min: 1, doc: 'x', parse: 'int' } }, want: /^default of env A: 0 is below the minimum 1$/ },
    { name: 'rejects a duplicate flag', spec: { a: { flag: '--x', doc: 'x', parse: 'string' }, b: { flag: '--x', doc: 'y', parse: 'string' } }, want: /flag --x is taken/ },
    { name: 'rejects a duplicate env', spec: { a: { env: 'X', doc: 'x', parse: 'string' }, b: { env: 'X', doc: 'y', parse: 'string' } }, want: /env X is taken/ },
    { name: 'reserves --help for callers', spec: { a: { flag: '--help', doc: 'x', parse: 'bool' } }, want: /--help is taken/ },
    { name: 'rejects a flag that is not --kebab-case', spec: { a: { flag: '-a', doc: 'x', parse: 'string' } }, want: /must look like --kebab-case/ },
    { name: 'rejects an env name with a dash', spec: { a: { env: 'NATS-URL', doc: 'x', parse: 'string' } }, want: /not a variable name/ },
  ];
  for (const tc of cases) it(tc.name, () => expect(() => defineConfig(tc.spec)).toThrow(tc.want));
});

describe('usage', () => {
  const text = config.usage();
  const cases: readonly { name: string; want: string }[] = [
    { name: 'shows a flag with its kind, env and default', want: '  --nats-url <url>  (env NATS_URL; default nats://127.0.0.1:4222)\n      NATS server to connect to.' },
    { name: 'shows bounds', want: '  --workers <int>  (env WORKERS; default 5; min 1; max 64)' },
    { name: 'shows duration defaults and bounds as durations', want: '  --batch-period <duration>  (env BATCH_PERIOD; default 1s; max 1m)' },
    { name: 'shows a bool as a switch', want: '  --dry-run[=false]  (env DRY_RUN; default false)' },
    { name: 'shows choices', want: '  --mode <iptables|nftables|ipvs>  (env PROXY_MODE; default iptables)' },
    { name: 'marks optional and required fields', want: '  --zone <string>  (env NODE_ZONE; optional)' },
    { name: 'marks required fields', want: '  --cluster <string>  (env CLUSTER; required)' },
    { name: 'shows a custom parser as <value>', want: '  --partitions <value>  (default 4)\n      Comma-separated partition ids.' },
  ];
  for (const tc of cases) it(tc.name, () => expect(text).toContain(tc.want));
  it('has two lines per field plus a header', () => expect(text.trimEnd().split('\n')).toHaveLength(1 + 2 * Object.keys(config.spec).length));
});

describe('helpRequested', () => {
  const cases = [
    { name: 'sees --help', argv: ['--workers', '2', '--help'], want: true },
    { name: 'sees -h', argv: ['-h'], want: true },
    { name: 'is false otherwise', argv: ['--workers', '2'], want: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(helpRequested(tc.argv)).toBe(tc.want));
});
