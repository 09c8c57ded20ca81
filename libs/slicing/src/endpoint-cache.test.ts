import { describe, expect, it } from 'vitest';
import type { Node, Service } from '@slicemesh/model';
import { deepFreeze, makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { forgetServiceMemo, podEndpoints, sliceKeys } from './endpoint-cache.ts';
import { endpointIdentity } from './endpoint-identity.ts';
import { planSlices, planSlicesWith } from './plan-slices.ts';
import { portMapKey } from './port-map-key.ts';

const pods = deepFreeze([makePod('p', { hostname: 'h', subdomain: 'web', ips: ['10.0.0.1', 'fd00::1'], labels: { app: 'web' } }), makePod('q', { ips: ['10.0.0.2'] })]);
const zoneA = deepFreeze(makeNode('node-1', { zone: 'a' }));
const svc = deepFreeze(makeService('web'));

function first(service: Service, node: Node) {
  return planSlices({ service, pods, nodes: new Map([['node-1', node]]), existingSlices: [] }).plan.create[0]?.endpoints[0];
}

describe('memoised pod endpoints never change results', () => {
  it('the same pods listed again reuse the very same endpoint objects', () => {
    expect(first(svc, zoneA)).toBe(first(svc, zoneA));
  });
  const variants: { name: string; service: Service; node: Node; want: { zone?: string; hostname?: string; ready?: boolean } }[] = [
    { name: 'a different node object (zone relabelled) is honoured', service: svc, node: deepFreeze(makeNode('node-1', { zone: 'b' })), want: { zone: 'b', hostname: 'h', ready: true } },
    { name: 'a different Service name drops the hostname', service: deepFreeze(makeService('api', { selector: { app: 'web' } })), node: zoneA, want: { zone: 'a', hostname: undefined, ready: true } },
    { name: 'publishNotReadyAddresses is honoured', service: deepFreeze(makeService('web', { publishNotReadyAddresses: true })), node: zoneA, want: { zone: 'a', hostname: 'h', ready: true } },
  ];
  for (const tc of variants) {
    it(tc.name, () => {
      first(svc, zoneA);
      const e = first(tc.service, tc.node);
      expect({ zone: e?.zone, hostname: e?.hostname, ready: e?.conditions.ready }).toEqual(tc.want);
    });
  }
  it('forgetting a Service memo is harmless', () => {
    const before = first(svc, zoneA);
    forgetServiceMemo('default', 'web');
    const after = first(svc, zoneA);
    expect(after).not.toBe(before);
    expect(after).toEqual(before);
  });
});

describe('podEndpoints / sliceKeys', () => {
  it('produces both families with their identities; a family without addresses is null', () => {
    const a = podEndpoints(pods[0] ?? makePod('x'), zoneA, svc);
    expect(a.IPv4?.endpoint.addresses).toEqual(['10.0.0.1']);
    expect(a.IPv6?.endpoint.addresses).toEqual(['fd00::1']);
    expect(a.IPv4?.key).toBe(endpointIdentity(a.IPv4?.endpoint ?? { addresses: [], conditions: {} }));
    expect(podEndpoints(pods[1] ?? makePod('x'), zoneA, svc).IPv6).toBeNull();
  });
  it('sliceKeys links own endpoints to their producer and computes identities of foreign ones', () => {
    const own = podEndpoints(pods[0] ?? makePod('x'), zoneA, svc).IPv4;
    const foreign = { addresses: ['10.0.0.2'], conditions: {}, targetRef: { name: 'x', namespace: 'default' } };
    const s = deepFreeze(makeSlice('mixed', [own?.endpoint ?? foreign, foreign]));
    const k = sliceKeys(s);
    expect(k.producers).toEqual([own, null]);
    expect(k.identities).toEqual(s.endpoints.map(endpointIdentity));
  });
  it('sliceKeys gives the port-map key and index-aligned identities, memoised per slice object', () => {
    const s = deepFreeze(makeSlice('s', [{ addresses: ['10.0.0.3'], conditions: {}, targetRef: { name: 'y', namespace: 'default' } }]));
    const k = sliceKeys(s);
    expect(k.portKey).toBe(portMapKey(s.ports));
    expect(k.identities).toEqual(s.endpoints.map(endpointIdentity));
    expect(k.producers).toEqual([null]);
    expect(sliceKeys(s)).toBe(k);
  });
});

describe('memo housekeeping never changes results', () => {
  const nodes = new Map([['node-1', deepFreeze(makeNode('node-1'))]]);
  const many = (n: number, app: string) => Array.from({ length: n }, (_, i) => deepFreeze(makePod(`${app}-${i}`, { labels: { app }, ips: [`10.1.${i >> 8}.${i & 255}`] })));

  it('after pruning the identity registry (few pods after many), old slices are still matched', () => {
    const service = deepFreeze(makeService('prune', { selector: { app: 'prune' } }));
    const big = many(3000, 'prune');
    const first = planSlicesWith({ service, pods: big, nodes, existingSlices: [] }, 'stamped').plan.create;
    planSlicesWith({ service, pods: big.slice(0, 5), nodes, existingSlices: [] }, 'stamped'); // prunes
    const again = { service, pods: [...big].reverse(), nodes, existingSlices: first.map((s, i) => deepFreeze({ ...s, metadata: { ...s.metadata, name: `s${i}` } })) };
    const fast = planSlicesWith(again, 'stamped');
    expect(fast).toEqual(planSlicesWith(again, 'reference'));
    expect(fast.plan.unchanged).toHaveLength(30);
  });

  it('after a Service memo is evicted (many other Services planned), its slices are still matched', () => {
    const service = deepFreeze(makeService('evicted', { selector: { app: 'evicted' } }));
    const pods = many(150, 'evicted');
    const first = planSlicesWith({ service, pods, nodes, existingSlices: [] }, 'stamped').plan.create;
    for (let k = 0; k < 300; k++) planSlicesWith({ service: deepFreeze(makeService(`other-${k}`)), pods: [], nodes, existingSlices: [] }, 'stamped');
    const again = { service, pods, nodes, existingSlices: first.map((s, i) => deepFreeze({ ...s, metadata: { ...s.metadata, name: `s${i}` } })) };
    const fast = planSlicesWith(again, 'stamped');
    expect(fast).toEqual(planSlicesWith(again, 'reference'));
    expect(fast.plan.unchanged).toHaveLength(2);
  });
});
