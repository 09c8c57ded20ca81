import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '@slicemesh/model';
import { makeService, makeSlice } from '@slicemesh/testing';
import { LABEL_SERVICE_PROXY_NAME, proxyIgnoresService, proxyIgnoresSlice } from './proxy-ignores.ts';

const labelled = <T extends Service | EndpointSlice>(o: T, labels: Record<string, string>): T => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, ...labels } } });

describe('D.2.10 proxyIgnoresService: what kube-proxy\'s Service informer never lists (habit 9)', () => {
  const cases: { name: string; service: Service; ignored: RegExp | null }[] = [
    { name: 'a plain Service: programmed', service: makeService('web'), ignored: null },
    { name: 'unrelated labels: programmed', service: labelled(makeService('web'), { app: 'web', 'service.kubernetes.io/topology-mode': 'Auto' }), ignored: null },
    { name: 'service-proxy-name set: meant for another proxy', service: labelled(makeService('web'), { [LABEL_SERVICE_PROXY_NAME]: 'cilium' }), ignored: /another proxy/ },
    { name: 'service-proxy-name empty: still set (DoesNotExist fails)', service: labelled(makeService('web'), { [LABEL_SERVICE_PROXY_NAME]: '' }), ignored: /service-proxy-name=""/ },
    { name: 'the headless label: not proxied', service: labelled(makeService('web'), { 'service.kubernetes.io/headless': '' }), ignored: /headless/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const why = proxyIgnoresService(tc.service);
      if (tc.ignored === null) expect(why).toBeNull();
      else expect(why).toMatch(tc.ignored);
    });
  }
});

describe("D.2.10 proxyIgnoresSlice: the slices kube-proxy's slice informer and cache drop (habit 9)", () => {
  const foreign = makeSlice('imported-1', [], { managedBy: 'mcs-importer' });
  const cases: { name: string; slice: EndpointSlice; ignored: RegExp | null }[] = [
    { name: "another controller's slice with a service-name label: programmed", slice: foreign, ignored: null },
    { name: 'our own slice: programmed', slice: makeSlice('web-abc', []), ignored: null },
    { name: 'no service-name label: belongs to no Service', slice: { ...foreign, metadata: { ...foreign.metadata, labels: { 'endpointslice.kubernetes.io/managed-by': 'x' } } }, ignored: /no kubernetes\.io\/service-name/ },
    { name: 'an empty service-name label: belongs to no Service', slice: labelled(foreign, { 'kubernetes.io/service-name': '' }), ignored: /no kubernetes\.io\/service-name/ },
    { name: 'service-proxy-name (copied from its Service): another proxy', slice: labelled(foreign, { [LABEL_SERVICE_PROXY_NAME]: 'other' }), ignored: /another proxy/ },
    { name: 'the headless label (set on the slices of headless Services)', slice: labelled(foreign, { 'service.kubernetes.io/headless': '' }), ignored: /headless/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const why = proxyIgnoresSlice(tc.slice);
      if (tc.ignored === null) expect(why).toBeNull();
      else expect(why).toMatch(tc.ignored);
    });
  }
});
