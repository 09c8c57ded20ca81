import { describe, expect, it } from 'vitest';
import type { Service, ServiceExport } from '@slicemesh/model';
import { EXPORT_ANNOTATION, exportedSince, exportOf } from './export-of.ts';

const SERVICE_CREATED = '2026-02-01T00:00:00Z';
const EXPORT_CREATED = '2026-03-01T00:00:00Z';

const service = (o: { annotated?: boolean; annotation?: string; type?: Service['spec']['type'] } = {}): Service => ({
  kind: 'Service',
  metadata: {
    name: 'cart', namespace: 'shop', creationTimestamp: SERVICE_CREATED,
    ...(o.annotated || o.annotation !== undefined ? { annotations: { [EXPORT_ANNOTATION]: o.annotation ?? 'true' } } : {}),
  },
  spec: o.type === 'ExternalName' ? { type: 'ExternalName', externalName: 'cart.example.com' } : { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
});
const serviceExport: ServiceExport = { kind: 'ServiceExport', metadata: { name: 'cart', namespace: 'shop', creationTimestamp: EXPORT_CREATED } };

describe('exportedSince: what exports a Service, and from when', () => {
  const cases: { name: string; service: Service | undefined; serviceExport: ServiceExport | undefined; want: string | undefined }[] = [
    { name: 'a ServiceExport exports the Service from its own creationTimestamp', service: service(), serviceExport, want: EXPORT_CREATED },
    { name: 'the annotation exports the Service from the Service\'s creationTimestamp', service: service({ annotated: true }), serviceExport: undefined, want: SERVICE_CREATED },
    { name: 'with both, the ServiceExport\'s time wins (the MCS API is the authority)', service: service({ annotated: true }), serviceExport, want: EXPORT_CREATED },
    { name: 'neither: not exported', service: service(), serviceExport: undefined, want: undefined },
    { name: 'an annotation other than "true" does not export', service: service({ annotation: 'yes' }), serviceExport: undefined, want: undefined },
    { name: 'a ServiceExport of a missing Service exports nothing', service: undefined, serviceExport, want: undefined },
    { name: 'a ServiceExport without creationTimestamp counts from the epoch', service: service(), serviceExport: { ...serviceExport, metadata: { name: 'cart', namespace: 'shop' } }, want: '1970-01-01T00:00:00.000Z' },
  ];
  for (const tc of cases) it(tc.name, () => expect(exportedSince(tc.service, tc.serviceExport)).toBe(tc.want));
});

describe('exportOf', () => {
  it('an ExternalName Service is not exportable, whatever exports it', () => {
    const s = service({ type: 'ExternalName' });
    expect(exportedSince(s, serviceExport)).toBe(EXPORT_CREATED);
    expect(exportOf({ cluster: 'a', service: s, slices: [], exportedAt: EXPORT_CREATED })).toBeNull();
  });

  it('the record carries the export time it is given', () => {
    expect(exportOf({ cluster: 'a', service: service(), slices: [], exportedAt: EXPORT_CREATED })?.exportedAt).toBe(EXPORT_CREATED);
  });
});
