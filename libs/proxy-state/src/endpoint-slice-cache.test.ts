import type { EndpointSlice } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { sliceEndpoint as ep } from '../testing/builders.ts';
import type { EndpointsByPort } from './endpoint-slice-cache.ts';
import { EndpointSliceCache } from './endpoint-slice-cache.ts';

const p80 = { name: 'http', port: 80, protocol: 'TCP' as const };
const p443 = { name: 'https', port: 443, protocol: 'TCP' as const };
const e1 = ep('10.0.1.0');
const e2 = ep('10.0.1.1');
const slice = (name: string, endpoints = [e1], ports = [p80], o: { service?: string } = {}): EndpointSlice =>
  deepFreeze(makeSlice(name, endpoints, { ports, service: o.service ?? 'svc1', namespace: 'bar' }));

const names = (m: EndpointsByPort | undefined) => Object.fromEntries([...(m ?? [])].map(([k, v]) => [k, v.map((e) => e.endpoint)]));

describe('EndpointSliceCache: is a pending update a change?', () => {
  const cases = [
    { name: 'D.2.2 identical slices, ports only: no change', initial: slice('foo', [], [p80]), updated: slice('foo', [], [p80]), changed: false },
    { name: 'D.2.2 ports reordered: change (whole-slice comparison)', initial: slice('foo', [], [p443, p80]), updated: slice('foo', [], [p80, p443]), changed: true },
    { name: 'D.2.2 port removed: change', initial: slice('foo', [], [p443, p80]), updated: slice('foo', [], [p443]), changed: true },
    { name: 'D.2.2 port added: change', initial: slice('foo', [], [p443]), updated: slice('foo', [], [p443, p80]), changed: true },
    { name: 'D.2.2 identical with endpoints: no change', initial: slice('foo', [e1, e2]), updated: slice('foo', [e1, e2]), changed: false },
    { name: 'D.2.2 endpoints reordered: change', initial: slice('foo', [e1, e2]), updated: slice('foo', [e2, e1]), changed: true },
    { name: 'D.2.2 endpoint added: change', initial: slice('foo', [e1]), updated: slice('foo', [e2, e1]), changed: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
      expect(cache.update(tc.initial)).toBe(true);
      cache.checkoutChanges();
      expect(cache.update(tc.updated)).toBe(tc.changed);
      expect(cache.hasPendingChanges()).toBe(tc.changed);
    });
  }
});

describe('EndpointSliceCache: pending and applied layers', () => {
  it('D.2.2 an update equal to what is pending is a no-op', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
    expect(cache.update(slice('a', [e1]))).toBe(true);
    expect(cache.update(slice('a', [e1]))).toBe(false);
  });

  it('D.2.2 a pending update is compared with the pending version, not the applied one', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
    cache.update(slice('a', [e1]));
    cache.checkoutChanges();
    expect(cache.update(slice('a', [e2]))).toBe(true);
    expect(cache.update(slice('a', [e1]))).toBe(true); // back to the applied state, still a pending change
    const changes = cache.checkoutChanges();
    const c = changes.get('bar/svc1');
    expect(names(c?.previous)).toEqual(names(c?.current));
  });

  it('D.2.2 a same-named slice replaces the old version entirely', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
    cache.update(slice('a', [e1, e2]));
    cache.checkoutChanges();
    cache.update(slice('a', [e2]));
    const c = cache.checkoutChanges().get('bar/svc1');
    expect(names(c?.previous)).toEqual({ 'http/TCP': ['10.0.1.0:80', '10.0.1.1:80'] });
    expect(names(c?.current)).toEqual({ 'http/TCP': ['10.0.1.1:80'] });
  });

  it('D.2.2 endpoints moving between slices are not lost (slices kept by name)', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
    cache.update(slice('a', [e1]));
    cache.update(slice('b', [e2]));
    cache.checkoutChanges();
    cache.update(slice('b', [e2, e1]));
    cache.update(slice('a', []));
    const c = cache.checkoutChanges().get('bar/svc1');
    expect(names(c?.current)).toEqual({ 'http/TCP': ['10.0.1.0:80', '10.0.1.1:80'] });
  });

  it('D.2.2 deleting a slice removes it; deleting an unknown slice is a no-op', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
    expect(cache.delete(slice('a'))).toBe(false);
    cache.update(slice('a', [e1]));
    cache.update(slice('b', [e2]));
    cache.checkoutChanges();
    expect(cache.delete(slice('a'))).toBe(true);
    expect(cache.delete(slice('a'))).toBe(false);
    const c = cache.checkoutChanges().get('bar/svc1');
    expect(names(c?.previous)).toEqual({ 'http/TCP': ['10.0.1.0:80', '10.0.1.1:80'] });
    expect(names(c?.current)).toEqual({ 'http/TCP': ['10.0.1.1:80'] });
    expect(names(cache.appliedEndpoints('bar/svc1'))).toEqual({ 'http/TCP': ['10.0.1.1:80'] });
  });

  it('D.2.1 slices of the other family or without the service label are ignored', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv6' });
    expect(cache.update(slice('a'))).toBe(false);
    const unlabeled = deepFreeze({ ...slice('b'), addressType: 'IPv6' as const, metadata: { name: 'b', namespace: 'bar' } });
    expect(cache.update(unlabeled)).toBe(false);
    expect(cache.checkoutChanges().size).toBe(0);
  });

  it('D.2.8 checkout reports each changed service once, in key order, then nothing', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
    cache.update(slice('z-1', [e1], [p80], { service: 'zeta' }));
    cache.update(slice('a-1', [e2], [p80], { service: 'alpha' }));
    cache.update(slice('a-2', [e1], [p80], { service: 'alpha' }));
    const changes = cache.checkoutChanges();
    expect([...changes.keys()]).toEqual(['bar/alpha', 'bar/zeta']);
    expect(names(changes.get('bar/alpha')?.previous)).toEqual({});
    expect(names(changes.get('bar/alpha')?.current)).toEqual({ 'http/TCP': ['10.0.1.0:80', '10.0.1.1:80'] });
    expect(cache.checkoutChanges().size).toBe(0);
    expect(cache.hasPendingChanges()).toBe(false);
  });

  it('D.2.5 endpoints on the cache node are local', () => {
    const cache = new EndpointSliceCache({ nodeName: 'host1', family: 'IPv4' });
    cache.update(slice('a', [ep('10.0.0.1', { node: 'host1' }), ep('10.0.0.2', { node: 'host2' })]));
    const cur = cache.checkoutChanges().get('bar/svc1')?.current.get('http/TCP') ?? [];
    expect(cur.map((e) => e.isLocal)).toEqual([true, false]);
  });
});
