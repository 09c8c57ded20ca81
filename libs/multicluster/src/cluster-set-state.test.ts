import { describe, expect, it } from 'vitest';
import { exportKey, parseViewKey } from '@slicemesh/contracts';
import type { EndpointSlice, Node, Service, ServiceExport } from '@slicemesh/model';
import { ClusterSetState } from './cluster-set-state.ts';
import { EXPORT_ANNOTATION } from './export-of.ts';
import { endpoint, record, slice } from './test-records.ts';

const service = (exported: boolean): Service => ({
  kind: 'Service',
  metadata: { name: 'cart', namespace: 'shop', creationTimestamp: '2026-02-01T00:00:00Z', ...(exported ? { annotations: { [EXPORT_ANNOTATION]: 'true' } } : {}) },
  spec: { selector: { app: 'cart' }, clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
});
const localSlice = (ready: boolean): EndpointSlice => ({
  kind: 'EndpointSlice',
  metadata: { name: 'cart-abc', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'cart' } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: [endpoint('10.2.0.1', { ready, zone: 'z1' })],
});
const node: Node = { kind: 'Node', metadata: { name: 'b-1', labels: { 'topology.kubernetes.io/zone': 'z1' } } };
const remote = record('a', { exportedAt: '2026-01-01T00:00:00Z', slices: [slice('cart-x', [endpoint('10.1.0.1')])] });

function fresh(): ClusterSetState {
  const s = new ClusterSetState({ cluster: 'b', clusterSetCidr: '243.0.0.0/16', ttlMs: 10_000 });
  s.setNode('b-1', node);
  return s;
}
const viewIps = (views: ReadonlyMap<string, EndpointSlice>, zone: string): string[] =>
  [...views].filter(([k]) => parseViewKey(k).zone === zone).flatMap(([, v]) => v.endpoints.flatMap((e) => e.addresses)).sort();

describe('ClusterSetState', () => {
  it('publishes an export only for an annotated Service, with its slices', () => {
    const s = fresh();
    s.setService('shop', 'cart', service(false));
    s.setSlice('shop', 'cart', 'cart-abc', localSlice(true));
    expect(s.ownExports().size).toBe(0);
    s.setService('shop', 'cart', service(true));
    const own = s.ownExports().get(exportKey({ namespace: 'shop', name: 'cart', cluster: 'b' }));
    expect(own).toMatchObject({ cluster: 'b', exportedAt: '2026-02-01T00:00:00Z', type: 'ClusterSetIP', slices: [{ name: 'cart-abc' }] });
  });

  it('imports another cluster\'s export while its heartbeat is fresh, withdraws it after the TTL, restores it with the next heartbeat', () => {
    const s = fresh();
    s.setRemoteExport(exportKey(remote), remote, 'a');
    s.heartbeatSeen('a', 1000);
    const at = (now: number) => s.imports(now);
    expect(viewIps(at(5000).views, 'z1')).toEqual(['10.1.0.1']);
    expect(at(5000).live).toEqual(['a', 'b']);
    expect(s.nextExpiry(5000)).toBe(11_000);
    const gone = at(11_000);
    expect(gone.views.size).toBe(0);
    expect(gone.svc.size).toBe(0);
    expect(gone.live).toEqual(['b']);
    s.heartbeatSeen('a', 12_000);
    expect(viewIps(at(12_000).views, 'z1')).toEqual(['10.1.0.1']);
  });

  it('its own ready endpoints take over from the other cluster\'s; not ready, the other cluster\'s come back', () => {
    const s = fresh();
    s.setRemoteExport(exportKey(remote), remote, 'a');
    s.heartbeatSeen('a', 0);
    s.setService('shop', 'cart', service(true));
    s.setSlice('shop', 'cart', 'cart-abc', localSlice(true));
    const local = s.imports(1);
    expect(viewIps(local.views, 'z1')).toEqual(['10.2.0.1']);
    expect(local.imports[0]).toMatchObject({ clusters: ['a', 'b'], source: 'local', conflicts: [] });
    s.setSlice('shop', 'cart', 'cart-abc', localSlice(false));
    const remoteAgain = s.imports(1);
    expect(remoteAgain.imports[0]?.source).toBe('remote');
    // The zone view holds what is ready; the unzoned view every endpoint, the not-ready one too.
    expect(viewIps(remoteAgain.views, 'z1')).toEqual(['10.1.0.1']);
    expect(viewIps(remoteAgain.views, '_')).toEqual(['10.1.0.1', '10.2.0.1']);
  });

  it('keeps an import\'s ClusterSet IP (adopted at start-up) and ignores its own exports echoed by the bucket', () => {
    const s = fresh();
    s.adoptClusterSetIp('shop', 'cart', '243.0.7.7');
    s.setRemoteExport(exportKey(remote), remote, 'a');
    s.setRemoteExport('svc.shop.cart.b', record('b'), 'b');
    s.heartbeatSeen('a', 0);
    const imp = s.imports(1);
    expect(imp.imports).toMatchObject([{ clusterSetIp: '243.0.7.7', clusters: ['a'] }]);
    expect([...imp.svc.values()][0]?.spec.clusterIP).toBe('243.0.7.7');
  });
});

describe('ClusterSetState: exported by a ServiceExport or by the annotation', () => {
  const exp: ServiceExport = { kind: 'ServiceExport', metadata: { name: 'cart', namespace: 'shop', creationTimestamp: '2026-03-01T00:00:00Z' } };
  const externalName: Service = { kind: 'Service', metadata: { name: 'cart', namespace: 'shop', creationTimestamp: '2026-02-01T00:00:00Z' }, spec: { type: 'ExternalName', externalName: 'cart.example.com' } };
  type Step = (s: ClusterSetState) => void;
  const svc = (exported: boolean): Step => (s) => s.setService('shop', 'cart', service(exported));
  const noSvc: Step = (s) => s.setService('shop', 'cart', null);
  const se: Step = (s) => s.setServiceExport('shop', 'cart', exp);
  const noSe: Step = (s) => s.setServiceExport('shop', 'cart', null);
  const cases: { name: string; steps: readonly Step[]; want: string | undefined }[] = [
    { name: "a ServiceExport exports an unannotated Service, from the ServiceExport's creationTimestamp", steps: [svc(false), se], want: '2026-03-01T00:00:00Z' },
    { name: 'the ServiceExport may come first: the Service exported once it exists', steps: [se, svc(false)], want: '2026-03-01T00:00:00Z' },
    { name: "annotated and a ServiceExport: the ServiceExport's time", steps: [svc(true), se], want: '2026-03-01T00:00:00Z' },
    { name: 'a ServiceExport of a missing Service exports nothing', steps: [se], want: undefined },
    { name: 'a ServiceExport of a deleted Service exports nothing', steps: [svc(false), se, noSvc], want: undefined },
    { name: 'a ServiceExport of an ExternalName Service exports nothing', steps: [(s) => s.setService('shop', 'cart', externalName), se], want: undefined },
    { name: 'the ServiceExport deleted: an unannotated Service is no longer exported', steps: [svc(false), se, noSe], want: undefined },
    { name: "the ServiceExport deleted: the annotation still exports, from the Service's time", steps: [svc(true), se, noSe], want: '2026-02-01T00:00:00Z' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const s = fresh();
      for (const step of tc.steps) step(s);
      const own = [...s.ownExports().values()];
      expect(own.map((r) => r.exportedAt)).toEqual(tc.want === undefined ? [] : [tc.want]);
      expect(s.imports(0).imports.map((i) => i.name)).toEqual(tc.want === undefined ? [] : ['cart']);
    });
  }
});
