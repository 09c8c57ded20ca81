// IpsetRestorer against the real `ipset` in a throwaway network namespace, and the fake
// (habit 10) checked against the same steps. Skips with the reason when ipset is not
// installed or namespaces cannot be created.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { renderIpvsCompanion } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { deepFreeze } from '@slicemesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeIpset, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import type { Exec } from './exec.ts';
import { netnsExec, spawnExec } from './exec.ts';
import { IpsetRestorer } from './ipset-restorer.ts';

const hasIpset = spawnSync('sh', ['-c', 'command -v ipset'], { encoding: 'utf8' }).status === 0;
const ns = `sm-ipset-${randomUUID().slice(0, 8)}`;
let skipReason: string | null = hasIpset ? null : 'ipset is not installed (.ci/run installs it)';
const real: Exec = netnsExec(spawnExec(), ns);

const v1 = deepFreeze(dpState([svc('ns1/web:http', { clusterIP: '172.30.0.41', nodePort: 30080, endpoints: [ep('10.180.0.1')] }), svc('ns1/db:pg', { clusterIP: '172.30.0.42', port: 5432 })]));
const v2 = deepFreeze({ ...v1, servicePorts: v1.servicePorts.slice(0, 1) });

beforeAll(() => {
  if (skipReason !== null) return;
  const r = spawnSync('ip', ['netns', 'add', ns], { encoding: 'utf8' });
  if (r.status !== 0) skipReason = `cannot create a network namespace: ${r.stderr.trim() || r.error?.message}`;
});
afterAll(() => {
  if (skipReason === null) spawnSync('ip', ['netns', 'delete', ns]);
});

/** The same steps against the kernel and the fake: restore twice (second state smaller), a bad script. */
async function scenario(exec: Exec, members: (set: string) => Promise<string[]>) {
  const r = new IpsetRestorer({ exec });
  await r.restore(renderIpvsCompanion(v1).ipsetRestore);
  const first = await members('SLICEMESH-CLUSTER-IP');
  await r.restore(renderIpvsCompanion(v2).ipsetRestore);
  const second = await members('SLICEMESH-CLUSTER-IP');
  const err = await r.restore('create SM-T hash:ip\nadd SM-NOPE 10.0.0.1\n').catch((e: unknown) => e);
  const names = (await r.setNames()).filter((n) => n.startsWith('SLICEMESH-')).length;
  return { first, second, line: err instanceof ApplyError ? err.line : err, names };
}

describe('D.5.4 IpsetRestorer on the real kernel', () => {
  it('restores the rendered sets, replaces their members, names the failing line — and the fake agrees', async (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const kernel = await scenario(real, async (set) => {
      const out = (await real({ command: 'ipset', args: ['list', set] })).stdout;
      return out.slice(out.indexOf('Members:\n') + 9).split('\n').filter((l) => l !== '').sort();
    });
    const fakeIpset = new FakeIpset();
    const fake = await scenario(new RecordingExec([fakeIpset]).exec, async (set) => Promise.resolve(fakeIpset.members(set) ?? []));
    expect(kernel).toEqual({ first: ['172.30.0.41,tcp:80', '172.30.0.42,tcp:5432'], second: ['172.30.0.41,tcp:80'], line: 2, names: renderIpvsCompanion(v1).sets.length });
    expect(fake).toEqual(kernel);
  });
});
