import { describe, expect, it } from 'vitest';
import { FakeIpLink } from './fake-ip-link.ts';

function ip(fake: FakeIpLink, ...args: string[]) {
  return fake.handle({ command: 'ip', args });
}

describe('FakeIpLink', () => {
  it('creates dummy links and keeps host addresses on them', () => {
    const fake = new FakeIpLink();
    expect(ip(fake, 'link', 'show', 'dev', 'kube-ipvs0')?.code).toBe(1);
    expect(ip(fake, 'link', 'add', 'kube-ipvs0', 'type', 'dummy')?.code).toBe(0);
    expect(ip(fake, 'link', 'add', 'kube-ipvs0', 'type', 'dummy')?.stderr).toMatch(/File exists/);
    expect(ip(fake, 'addr', 'add', '10.0.0.1/32', 'dev', 'kube-ipvs0')?.code).toBe(0);
    expect(ip(fake, 'addr', 'add', '10.0.0.1/32', 'dev', 'kube-ipvs0')?.stderr).toMatch(/File exists/);
    expect(ip(fake, '-o', 'addr', 'show', 'dev', 'kube-ipvs0')?.stdout).toMatch(/inet 10\.0\.0\.1\/32 scope global kube-ipvs0/);
    expect(ip(fake, 'addr', 'del', '10.0.0.1/32', 'dev', 'kube-ipvs0')?.code).toBe(0);
    expect(ip(fake, 'addr', 'del', '10.0.0.1/32', 'dev', 'kube-ipvs0')?.stderr).toMatch(/Cannot assign requested address/);
    expect(fake.addresses('kube-ipvs0')).toEqual([]);
  });

  it('plays a kernel without the dummy link type', () => {
    expect(ip(new FakeIpLink({ dummySupported: false }), 'link', 'add', 'kube-ipvs0', 'type', 'dummy')?.stderr).toMatch(/Unknown device type/);
  });

  it('leaves ip netns and other programs to others', () => {
    const fake = new FakeIpLink();
    expect(ip(fake, 'netns', 'exec', 'x', 'true')).toBeUndefined();
    expect(fake.handle({ command: 'nft', args: [] })).toBeUndefined();
  });
});
