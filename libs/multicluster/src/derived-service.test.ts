import { describe, expect, it } from 'vitest';
import { allocateClusterSetIp, derivedService, derivedServiceName, isDerivedServiceName, parseIPv4Cidr } from './derived-service.ts';
import { mergeExports } from './merge-exports.ts';
import { record } from './test-records.ts';

describe('derived Service', () => {
  it('is named derived-<10 base32hex characters of the name hash>: stable, a DNS label, different per Service', () => {
    const a = derivedServiceName('shop', 'cart');
    expect(a).toMatch(/^derived-[0-9a-v]{10}$/);
    expect(derivedServiceName('shop', 'cart')).toBe(a);
    expect(derivedServiceName('shop', 'carts')).not.toBe(a);
    expect(derivedServiceName('sho', 'p/cart')).not.toBe(a);
    expect(isDerivedServiceName(a)).toBe(true);
    for (const other of ['derived-', 'derived-ABCDEFGHIJ', 'cart', `${a}x`]) expect(isDerivedServiceName(other), other).toBe(false);
  });

  it('is a ClusterIP Service at the ClusterSet IP with the merged ports, or headless', () => {
    const merged = mergeExports([record('a', { sessionAffinity: 'ClientIP' })]);
    const s = derivedService(merged, '243.0.1.2');
    expect(s.spec).toMatchObject({ type: 'ClusterIP', clusterIP: '243.0.1.2', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 80 }], sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10_800 } } });
    expect(s.spec.selector).toBeUndefined();
    expect(s.metadata.labels).toEqual({ 'multicluster.kubernetes.io/service-name': 'cart' });
    expect(derivedService(mergeExports([record('a', { type: 'Headless' })]), '243.0.1.2').spec.clusterIP).toBe('None');
  });
});

describe('allocateClusterSetIp', () => {
  it('picks the same host address for the same Service, inside the range', () => {
    const ip = allocateClusterSetIp('243.0.0.0/16', 'shop', 'cart', new Set());
    expect(ip).toBe(allocateClusterSetIp('243.0.0.0/16', 'shop', 'cart', new Set()));
    expect(ip).toMatch(/^243\.0\.\d+\.\d+$/);
  });
  it('moves to the next free address when the hashed one is taken, and wraps', () => {
    const ip = allocateClusterSetIp('10.9.0.0/30', 'shop', 'cart', new Set());
    const other = allocateClusterSetIp('10.9.0.0/30', 'shop', 'cart', new Set([ip]));
    expect(new Set([ip, other])).toEqual(new Set(['10.9.0.1', '10.9.0.2']));
  });
  it('refuses a full range and what is no IPv4 CIDR from /8 to /30', () => {
    expect(() => allocateClusterSetIp('10.9.0.0/30', 'shop', 'cart', new Set(['10.9.0.1', '10.9.0.2']))).toThrow(/range 10\.9\.0\.0\/30 is full \(2 addresses\)/);
    for (const bad of ['10.0.0.0/31', '10.0.0.0', 'fd00::/64', '10.0.0.0/7', 'x/16']) expect(() => parseIPv4Cidr(bad), bad).toThrow(/not an IPv4 CIDR/);
    expect(parseIPv4Cidr('243.1.2.3/16')).toEqual({ base: (243 * 2 ** 24) + 65_536, size: 65_536 });
  });
});
