// Export records for the tests of this library.
import type { ExportedSlice, ServiceExportRecord } from '@slicemesh/contracts';
import type { Endpoint } from '@slicemesh/model';

export function endpoint(ip: string, opts: { ready?: boolean; zone?: string; node?: string; hintZone?: string } = {}): Endpoint {
  return {
    addresses: [ip],
    conditions: { ready: opts.ready ?? true, serving: opts.ready ?? true, terminating: false },
    ...(opts.zone !== undefined ? { zone: opts.zone } : {}),
    ...(opts.node !== undefined ? { nodeName: opts.node } : {}),
    ...(opts.hintZone !== undefined ? { hints: { forZones: [{ name: opts.hintZone }] } } : {}),
  };
}

export function slice(name: string, endpoints: Endpoint[]): ExportedSlice {
  return { name, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints };
}

export function record(cluster: string, over: Partial<ServiceExportRecord> = {}): ServiceExportRecord {
  return {
    v: 1,
    cluster,
    namespace: 'shop',
    name: 'cart',
    exportedAt: '2026-01-01T00:00:00Z',
    type: 'ClusterSetIP',
    ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
    sessionAffinity: 'None',
    slices: [],
    ...over,
  };
}
