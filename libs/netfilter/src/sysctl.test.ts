import { ipvsSysctls } from '@slicemesh/dataplane';
import { describe, expect, it } from 'vitest';
import { FakeSysctl, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import { SysctlWriter } from './sysctl.ts';

const ipvsKeys = { 'net.ipv4.vs.conntrack': '0', 'net.ipv4.vs.expire_nodest_conn': '0', 'net.ipv4.vs.expire_quiescent_template': '1', 'net.ipv4.ip_forward': '1' };

describe('D.5.5 SysctlWriter', () => {
  it('writes only the keys that differ, and nothing the second time', async () => {
    const fake = new FakeSysctl(ipvsKeys);
    const rec = new RecordingExec([fake]);
    const w = new SysctlWriter({ exec: rec.exec });
    expect(await w.ensure(ipvsSysctls('IPv4'))).toEqual(['net.ipv4.vs.conntrack', 'net.ipv4.vs.expire_nodest_conn']);
    expect(rec.commandLines().filter((l) => l.includes(' -w '))).toEqual(['sysctl -w net.ipv4.vs.conntrack=1', 'sysctl -w net.ipv4.vs.expire_nodest_conn=1']);
    expect(await w.ensure(ipvsSysctls('IPv4'))).toEqual([]);
  });

  it('a key the kernel lacks (no IPVS module) is an ApplyError naming it', async () => {
    const w = new SysctlWriter({ exec: new RecordingExec([new FakeSysctl({ 'net.ipv4.ip_forward': '1' })]).exec });
    const err = await w.ensure(ipvsSysctls('IPv4')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplyError);
    expect(String((err as ApplyError).message)).toContain('net/ipv4/vs/conntrack');
  });

  it('IPv6 forwarding for an IPv6 node', () => {
    expect(ipvsSysctls('IPv6').map((s) => s.key)).toContain('net.ipv6.conf.all.forwarding');
  });
});
