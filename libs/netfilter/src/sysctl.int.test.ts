// SysctlWriter against the real kernel in a throwaway namespace: forwarding is set there; the
// IPVS keys only where the kernel has IPVS (ours does not: the case says so and skips).

import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { ipvsSysctls } from '@slicemesh/dataplane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netnsExec, spawnExec } from './exec.ts';
import { SysctlWriter } from './sysctl.ts';

const ns = `sm-sysctl-${randomUUID().slice(0, 8)}`;
let skipReason: string | null = null;
const real = netnsExec(spawnExec(), ns);

beforeAll(() => {
  const r = spawnSync('ip', ['netns', 'add', ns], { encoding: 'utf8' });
  if (r.status !== 0) skipReason = `cannot create a network namespace: ${r.stderr.trim() || r.error?.message}`;
});
afterAll(() => {
  if (skipReason === null) spawnSync('ip', ['netns', 'delete', ns]);
});

describe('D.5.5 kernel settings on the real kernel', () => {
  it('forwarding: written when it differs, left alone when it does not', async (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const w = new SysctlWriter({ exec: real });
    await real({ command: 'sysctl', args: ['-w', 'net.ipv4.ip_forward=0'] });
    expect(await w.ensure([{ key: 'net.ipv4.ip_forward', value: '1' }])).toEqual(['net.ipv4.ip_forward']);
    expect(await w.ensure([{ key: 'net.ipv4.ip_forward', value: '1' }])).toEqual([]);
  });

  it('the IPVS keys (runs only where the kernel has IPVS)', async (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    if (!existsSync('/proc/sys/net/ipv4/vs')) ctx.skip('this kernel has no IPVS (/proc/sys/net/ipv4/vs is missing); the settings are covered by unit tests with the fake');
    const w = new SysctlWriter({ exec: real });
    await w.ensure(ipvsSysctls('IPv4'));
    expect(await w.ensure(ipvsSysctls('IPv4'))).toEqual([]);
  });
});
