import { describe, expect, it } from 'vitest';
import { FakeIpLink, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import { IpLink, hostCIDR } from './ip-link.ts';

function setup(dummySupported = true) {
  const fake = new FakeIpLink({ dummySupported });
  const rec = new RecordingExec([fake]);
  return { fake, rec, link: new IpLink({ exec: rec.exec }) };
}

describe('hostCIDR', () => {
  const cases = [
    { name: 'IPv4 host route is /32', ip: '10.96.0.10', want: '10.96.0.10/32' },
    { name: 'IPv6 host route is /128', ip: 'fd00::10', want: 'fd00::10/128' },
  ];
  for (const tc of cases) it(tc.name, () => expect(hostCIDR(tc.ip)).toBe(tc.want));
});

describe('IpLink', () => {
  it('D.5.1 creates the dummy interface once', async () => {
    const { link, fake } = setup();
    expect(await link.ensureDummy('kube-ipvs0')).toBe(true);
    expect(await link.ensureDummy('kube-ipvs0')).toBe(false);
    expect(fake.addresses('kube-ipvs0')).toEqual([]);
  });

  it('reports a kernel without dummy links as ApplyError', async () => {
    const { link } = setup(false);
    const e = (await link.ensureDummy('kube-ipvs0').catch((x: unknown) => x)) as ApplyError;
    expect(e).toBeInstanceOf(ApplyError);
    expect(e.stderr).toContain('Unknown device type');
  });

  it('binds and unbinds host addresses, idempotently, and lists them canonically', async () => {
    const { link, fake } = setup();
    await link.ensureDummy('kube-ipvs0');
    await link.addAddress('kube-ipvs0', '10.96.0.10');
    await link.addAddress('kube-ipvs0', '10.96.0.10');
    await link.addAddress('kube-ipvs0', 'fd00::a');
    expect(fake.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', 'fd00::a/128']);
    expect(await link.addresses('kube-ipvs0')).toEqual(['10.96.0.10', 'fd00::a']);
    await link.deleteAddress('kube-ipvs0', '10.96.0.10');
    await link.deleteAddress('kube-ipvs0', '10.96.0.10');
    expect(await link.addresses('kube-ipvs0')).toEqual(['fd00::a']);
  });

  it('parses the addresses out of real `ip -o addr` output', async () => {
    const out = [
      '5: kube-ipvs0    inet 10.96.0.1/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever',
      '5: kube-ipvs0    inet6 FD00:0:0::0001/128 scope global \\       valid_lft forever preferred_lft forever',
      '',
    ].join('\n');
    const link = new IpLink({ exec: async () => ({ code: 0, stdout: out, stderr: '' }) });
    expect(await link.addresses('kube-ipvs0')).toEqual(['10.96.0.1', 'fd00::1']);
  });
});
