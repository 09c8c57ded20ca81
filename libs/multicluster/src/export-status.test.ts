import { describe, expect, it } from 'vitest';
import type { Service, ServiceExport } from '@slicemesh/model';
import { serviceExportConditions } from './export-status.ts';

const NOW = '2026-11-27T08:00:00Z';
const svcex = (conditions?: ServiceExport['status']): ServiceExport => ({ kind: 'ServiceExport', metadata: { name: 'cart', namespace: 'shop', generation: 2 }, ...(conditions ? { status: conditions } : {}) });
const service = (type?: 'ExternalName'): Service => ({ kind: 'Service', metadata: { name: 'cart', namespace: 'shop' }, spec: { ...(type ? { type, externalName: 'x.example' } : { selector: { app: 'cart' } }), ports: [{ port: 80 }] } });

describe('serviceExportConditions (mcs-api Valid and Conflict)', () => {
  const cases = [
    { name: 'a ServiceExport without its Service is not valid', service: undefined, conflicts: [], want: [{ type: 'Valid', status: 'False', reason: 'NoService', message: 'Service shop/cart does not exist' }] },
    { name: 'an ExternalName Service cannot be exported', service: service('ExternalName'), conflicts: [], want: [{ type: 'Valid', status: 'False', reason: 'InvalidServiceType' }] },
    { name: 'agreeing exports: valid, no conflict', service: service(), conflicts: [], want: [{ type: 'Valid', status: 'True', reason: 'Exported' }, { type: 'Conflict', status: 'False', reason: 'NoConflicts' }] },
    {
      name: 'a port conflict names the property and the winner',
      service: service(),
      conflicts: ["port \"http\": http TCP/80 wins over b's http TCP/8080"],
      want: [{ type: 'Valid', status: 'True' }, { type: 'Conflict', status: 'True', reason: 'PortConflict', message: "the oldest export wins: port \"http\": http TCP/80 wins over b's http TCP/8080" }],
    },
    { name: 'a type conflict', service: service(), conflicts: ["type: a's ClusterSetIP wins over b's Headless"], want: [{ type: 'Valid', status: 'True' }, { type: 'Conflict', status: 'True', reason: 'TypeConflict' }] },
    { name: 'a session affinity conflict', service: service(), conflicts: ["sessionAffinity: a's None wins over b's ClientIP (10800 s)"], want: [{ type: 'Valid', status: 'True' }, { type: 'Conflict', status: 'True', reason: 'SessionAffinityConflict' }] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = serviceExportConditions({ serviceExport: svcex(), service: tc.service, conflicts: tc.conflicts, now: NOW });
      expect(got).toMatchObject(tc.want);
      for (const c of got) expect(c).toMatchObject({ lastTransitionTime: NOW, observedGeneration: 2 });
    });
  }

  it('keeps the transition time of a condition whose status stays, and moves the one that changes', () => {
    const was = svcex({ conditions: [{ type: 'Valid', status: 'True', reason: 'Exported', lastTransitionTime: '2026-01-01T00:00:00Z' }, { type: 'Conflict', status: 'False', reason: 'NoConflicts', lastTransitionTime: '2026-01-01T00:00:00Z' }] });
    const got = serviceExportConditions({ serviceExport: was, service: service(), conflicts: ["type: a's ClusterSetIP wins over b's Headless"], now: NOW });
    expect(got.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([['Valid', 'True', '2026-01-01T00:00:00Z'], ['Conflict', 'True', NOW]]);
  });
});
