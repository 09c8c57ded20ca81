import { describe, expect, it } from 'vitest';
import type { Node } from '@slicemesh/model';
import { importService } from './import-views.ts';
import { endpoint, record, slice } from './test-records.ts';

const node = (name: string, zone: string): Node => ({ kind: 'Node', metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } } });
const NODES = [node('b-1', 'z1'), node('b-2', 'z2')];

/** Addresses of the import's view of `zone`. */
function viewAddresses(imp: ReturnType<typeof importService>, zone: string): string[] {
  return (imp.views.byZone.get(zone) ?? []).flatMap((e) => e.slice.endpoints.flatMap((ep) => ep.addresses)).sort();
}

describe('importService: locality', () => {
  const remote = record('a', { slices: [slice('cart-x', [endpoint('10.1.0.1', { zone: 'z1', node: 'b-1', hintZone: 'z1' }), endpoint('10.1.0.2', { zone: 'z2' })])] });

  it('another cluster\'s endpoints serve every zone when this cluster has none', () => {
    const imp = importService({ cluster: 'b', records: [remote], clusterSetIp: '243.0.0.9', nodes: NODES });
    expect(imp.source).toBe('remote');
    expect(viewAddresses(imp, 'z1')).toEqual(['10.1.0.1', '10.1.0.2']);
    expect(viewAddresses(imp, 'z2')).toEqual(['10.1.0.1', '10.1.0.2']);
    // Their node names and hints stay in their cluster: b-1 here is not a's b-1.
    for (const s of imp.slices) for (const e of s.endpoints) expect(e.nodeName === undefined && e.hints === undefined).toBe(true);
    expect(imp.slices[0]?.metadata.labels).toMatchObject({ 'kubernetes.io/service-name': imp.service.metadata.name, 'multicluster.kubernetes.io/source-cluster': 'a', 'multicluster.kubernetes.io/service-name': 'cart' });
  });

  it('this cluster\'s ready endpoints win, narrowed to the zone by its own hints', () => {
    const own = record('b', { slices: [slice('cart-y', [endpoint('10.2.0.1', { zone: 'z1', node: 'b-1', hintZone: 'z1' }), endpoint('10.2.0.2', { zone: 'z2', node: 'b-2', hintZone: 'z2' })])] });
    const imp = importService({ cluster: 'b', records: [remote, own], clusterSetIp: '243.0.0.9', nodes: NODES });
    expect(imp.source).toBe('local');
    expect(viewAddresses(imp, 'z1')).toEqual(['10.2.0.1']);
    expect(viewAddresses(imp, 'z2')).toEqual(['10.2.0.2']);
    expect(viewAddresses(imp, '_')).toEqual(['10.2.0.1', '10.2.0.2']);
  });

  it('this cluster without a ready endpoint falls over to every cluster', () => {
    const own = record('b', { slices: [slice('cart-y', [endpoint('10.2.0.1', { ready: false })])] });
    const imp = importService({ cluster: 'b', records: [remote, own], clusterSetIp: '243.0.0.9', nodes: NODES });
    expect(imp.source).toBe('remote');
    expect(viewAddresses(imp, '_')).toEqual(['10.1.0.1', '10.1.0.2', '10.2.0.1']);
  });

  it('a headless import has a derived Service but no views (nothing to program)', () => {
    const imp = importService({ cluster: 'b', records: [record('a', { type: 'Headless', slices: remote.slices })], clusterSetIp: null, nodes: NODES });
    expect(imp.service.spec.clusterIP).toBe('None');
    expect(imp.views.entries.size).toBe(0);
    expect(imp.slices).toHaveLength(1);
  });
});
