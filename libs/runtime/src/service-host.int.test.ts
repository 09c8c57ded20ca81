import { describe, expect, it } from 'vitest';
import { ConfigError } from './errors.ts';
import type { HostedService, ServiceDefinition } from './service-host.ts';
import { hostService, runServiceMain } from './service-host.ts';

interface Cfg {
  readonly logLevel: string;
  readonly healthPort: number;
  readonly fail?: 'config' | 'conflict' | 'startup';
}

function definition(onClose: () => void = () => {}): ServiceDefinition<Cfg> & { readonly started: HostedService[] } {
  const started: HostedService[] = [];
  let ready = false;
  return {
    name: 'demo',
    summary: 'A service for the host tests.',
    started,
    config: {
      parse: (argv) => {
        if (argv.includes('--bad')) throw new ConfigError('--bad', 'is not a setting');
        return { logLevel: 'silent', healthPort: 0, ...(argv.includes('--conflict') ? { fail: 'conflict' as const } : {}), ...(argv.includes('--boom') ? { fail: 'startup' as const } : {}) };
      },
      usage: () => '  --bad   never valid\n',
    },
    common: (c) => c,
    start: (c) => {
      if (c.fail === 'conflict') throw new ConfigError('--conflict', 'contradicts another setting');
      const s: HostedService = {
        ready: c.fail === 'startup' ? Promise.reject(new Error('cannot reach the database')) : Promise.resolve().then(() => void (ready = true)),
        readiness: () => (ready ? { ready: true } : { ready: false, reason: 'warming up' }),
        close: async () => onClose(),
      };
      s.ready.catch(() => {});
      started.push(s);
      return s;
    },
  };
}

function io() {
  const out = { stdout: '', stderr: '', exits: [] as number[] };
  return { out, io: { stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s) }, exit: (c: number) => void out.exits.push(c) } };
}

describe('runServiceMain', () => {
  const cases = [
    { name: '--help prints the summary and the settings, and starts nothing', argv: ['--help'], stdout: /A service for the host tests[\s\S]*--bad/, stderr: /^$/, exits: [] as number[] },
    { name: 'a bad setting is one line on stderr and exit 2', argv: ['--bad'], stdout: /^$/, stderr: /^demo: .*--bad.*is not a setting\n$/, exits: [2] },
    { name: 'settings that contradict each other exit 2 too', argv: ['--conflict'], stdout: /^$/, stderr: /^demo: .*contradicts another setting\n$/, exits: [2] },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const d = definition();
      const { out, io: fakeIo } = io();
      await runServiceMain(d, tc.argv, {}, fakeIo);
      expect(out.stdout).toMatch(tc.stdout);
      expect(out.stderr).toMatch(tc.stderr);
      expect(out.exits).toEqual(tc.exits);
    });
  }

  it('a startup failure closes the service and exits 1', async () => {
    let closed = 0;
    const d = definition(() => closed++);
    const { out, io: fakeIo } = io();
    await runServiceMain(d, ['--boom'], {}, fakeIo);
    await expect.poll(() => out.exits).toEqual([1]);
    expect(closed).toBe(1);
    process.removeAllListeners('SIGINT');
    process.removeAllListeners('SIGTERM');
  });
});

describe('hostService', () => {
  it('serves /readyz from the service, /metrics from its registry, and stops both once', async () => {
    let closed = 0;
    const host = hostService(definition(() => closed++), { logLevel: 'silent', healthPort: 0 }, { host: '127.0.0.1' });
    await host.ready;
    const base = `http://127.0.0.1:${host.healthPort()}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    host.metrics.counter({ name: 'demo_things_total', help: 'things' }).inc();
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/slicemesh_demo_things_total\{component="demo"\} 1/);
    await Promise.all([host.stop(), host.stop()]);
    expect(closed).toBe(1);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
