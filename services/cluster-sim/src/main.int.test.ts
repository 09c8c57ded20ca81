// The service process as deployed (dist/cluster-sim.js, built by the test setup, with its
// scenarios beside it): prints its URL, serves the default scenario, exits 0 on SIGTERM, and
// exits 2 with a one-line message on a bad scenario.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { STATIC_SCENARIO_FILE } from './start.ts';

const MAIN = fileURLToPath(new URL('../../../dist/cluster-sim.js', import.meta.url));

function start(args: string[]) {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function waitFor<T>(what: string, get: () => T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('cluster-sim main', () => {
  it('prints its URL, serves the default scenario and exits 0 on SIGTERM', async () => {
    const proc = start(['--port', '0', '--log-level', 'warn']);
    try {
      const url = await waitFor('the URL', () => /listening on (http:\/\/\S+)/.exec(proc.out())?.[1]);
      const pods = (await (await fetch(`${url}/api/v1/pods`)).json()) as { items: unknown[] };
      expect(pods.items.length).toBeGreaterThanOrEqual(25);
      const nodes = (await (await fetch(`${url}/api/v1/nodes`)).json()) as { items: unknown[] };
      expect(nodes.items).toHaveLength(9);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    } finally {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    }
  });

  it('on the static scenario nothing changes until a client writes; --event-ttl expires Events', async () => {
    const proc = start(['--port', '0', '--log-level', 'warn', '--scenario', STATIC_SCENARIO_FILE, '--event-ttl', '1s']);
    try {
      const url = await waitFor('the URL', () => /listening on (http:\/\/\S+)/.exec(proc.out())?.[1]);
      type List = { metadata: { resourceVersion: string }; items: { status?: { conditions?: { type: string; status: string }[] } }[] };
      const get = async (path: string) => (await (await fetch(`${url}${path}`)).json()) as List;
      const ready = (pods: List) => pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
      for (let i = 0; i < 200 && ready(await get('/api/v1/pods')) < 11; i++) await new Promise((r) => setTimeout(r, 50));
      expect(ready(await get('/api/v1/pods'))).toBe(11);
      const settled = (await get('/api/v1/namespaces')).metadata.resourceVersion;
      await new Promise((r) => setTimeout(r, 1000));
      expect((await get('/api/v1/namespaces')).metadata.resourceVersion).toBe(settled);
      const event = { metadata: { name: 'e1' }, involvedObject: { kind: 'Service', namespace: 'shop', name: 'web' }, reason: 'Test', message: 'm', type: 'Normal' };
      expect((await fetch(`${url}/api/v1/namespaces/shop/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) })).status).toBe(201);
      expect(Number((await get('/api/v1/namespaces')).metadata.resourceVersion)).toBe(Number(settled) + 1);
      await new Promise((r) => setTimeout(r, 1500));
      expect([(await get('/api/v1/events')).items, Number((await get('/api/v1/namespaces')).metadata.resourceVersion)]).toEqual([[], Number(settled) + 2]);
      proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
    } finally {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    }
  });

  it('exits 2 naming the file and field of a bad scenario', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cluster-sim-main-'));
    try {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, 'deployments: [{name: web, replicas: many}]\n');
      const proc = start(['--port', '0', '--scenario', file]);
      expect(await proc.exited).toBe(2);
      expect(proc.err().trim()).toBe(`cluster-sim: ${file}: deployments[0].replicas: must be an integer between 0 and 100000, got "many"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 with usage on an unknown flag', async () => {
    const proc = start(['--bogus']);
    expect(await proc.exited).toBe(2);
    expect(proc.err()).toContain('usage: cluster-sim');
  });
});
