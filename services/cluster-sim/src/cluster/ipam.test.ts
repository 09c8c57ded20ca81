import { describe, expect, it } from 'vitest';
import { PodIPAM } from './ipam.ts';

describe('PodIPAM', () => {
  it('gives nodes consecutive /24 blocks in first-seen order', () => {
    const ipam = new PodIPAM('10.244.0.0/16', 24);
    expect([ipam.cidrFor('a'), ipam.cidrFor('b'), ipam.cidrFor('a')]).toEqual(['10.244.0.0/24', '10.244.1.0/24', '10.244.0.0/24']);
  });

  it('hands out host addresses from .2 and does not reuse a released one right away', () => {
    const ipam = new PodIPAM('10.244.0.0/16', 24);
    const first = [ipam.allocate('a'), ipam.allocate('a')];
    ipam.release('a', first[0]!);
    expect([...first, ipam.allocate('a')]).toEqual(['10.244.0.2', '10.244.0.3', '10.244.0.4']);
  });

  it('wraps around to freed addresses and reports exhaustion', () => {
    const ipam = new PodIPAM('10.0.0.0/24', 29); // hosts .2 .. .6
    const got = Array.from({ length: 5 }, () => ipam.allocate('n'));
    expect(got).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    expect(ipam.allocate('n')).toBeUndefined();
    ipam.release('n', '10.0.0.3');
    expect(ipam.allocate('n')).toBe('10.0.0.3');
  });

  it('claimed addresses are skipped', () => {
    const ipam = new PodIPAM('10.244.0.0/16', 24);
    ipam.claim('a', '10.244.0.2');
    expect(ipam.allocate('a')).toBe('10.244.0.3');
  });

  it('fails clearly when the pod CIDR runs out of node blocks', () => {
    const ipam = new PodIPAM('10.0.0.0/23', 24);
    ipam.cidrFor('a');
    ipam.cidrFor('b');
    expect(() => ipam.cidrFor('c')).toThrow('has no /24 left for node c');
  });
});
