import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import { labelsDrifted, newSlice, ownedBy, serviceOwnerReference, sliceLabels, stampTriggerTime, withTriggerTime } from './slice-metadata.ts';

describe('A.9.3 slice labels', () => {
  const cases: { name: string; service: Service; want: Record<string, string> }[] = [
    {
      name: 'service labels plus service-name and managed-by',
      service: makeService('web', { labels: { team: 'a' } }),
      want: { team: 'a', [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER },
    },
    {
      name: 'headless label iff clusterIP is None',
      service: makeService('web', { clusterIP: 'None' }),
      want: { [LABEL_HEADLESS]: '', [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER },
    },
    {
      name: 'headless label iff clusterIP is empty',
      service: makeService('web', { clusterIP: '' }),
      want: { [LABEL_HEADLESS]: '', [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER },
    },
    {
      name: 'reserved keys on the Service are ignored',
      service: makeService('web', { labels: { [LABEL_SERVICE_NAME]: 'evil', [LABEL_MANAGED_BY]: 'me', [LABEL_HEADLESS]: 'x', keep: 'y' } }),
      want: { keep: 'y', [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(sliceLabels(deepFreeze(tc.service), MANAGED_BY_CONTROLLER)).toEqual(tc.want);
    });
  }
});

describe('A.9.4 label drift', () => {
  const cases: { name: string; service: Service; slice: EndpointSlice; want: boolean }[] = [
    { name: 'same non-reserved labels -> no drift', service: makeService('web', { labels: { a: '1' } }), slice: makeSlice('s', [], { labels: { a: '1' } }), want: false },
    { name: 'changed value -> drift', service: makeService('web', { labels: { a: '2' } }), slice: makeSlice('s', [], { labels: { a: '1' } }), want: true },
    { name: 'added label -> drift', service: makeService('web', { labels: { a: '1', b: '1' } }), slice: makeSlice('s', [], { labels: { a: '1' } }), want: true },
    { name: 'removed label -> drift', service: makeService('web'), slice: makeSlice('s', [], { labels: { a: '1' } }), want: true },
    { name: 'headless label only -> no drift', service: makeService('web', { clusterIP: 'None' }), slice: makeSlice('s', []), want: false },
    { name: 'stale headless label only -> no drift', service: makeService('web'), slice: makeSlice('s', [], { labels: { [LABEL_HEADLESS]: '' } }), want: false },
    { name: 'reserved label on the Service -> no drift', service: makeService('web', { labels: { [LABEL_SERVICE_NAME]: 'x' } }), slice: makeSlice('s', []), want: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(labelsDrifted(deepFreeze(tc.slice), deepFreeze(tc.service))).toBe(tc.want);
    });
  }
});

describe('owner reference', () => {
  const svc = deepFreeze(makeService('web', { uid: 'u-web' }));
  it('A.9.2 one controller reference to the Service', () => {
    expect(serviceOwnerReference(svc)).toEqual({ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u-web', controller: true, blockOwnerDeletion: true });
  });
  const owners: { name: string; slice: EndpointSlice; want: boolean }[] = [
    { name: 'A.7.5 same uid, v1 Service -> owned', slice: makeSlice('s', [], { serviceUid: 'u-web' }), want: true },
    { name: 'A.7.5 another uid (recreated Service) -> not owned', slice: makeSlice('s', [], { serviceUid: 'u-old' }), want: false },
    { name: 'A.7.5 no ownerReferences -> not owned', slice: { ...makeSlice('s', []), metadata: { name: 's' } }, want: false },
  ];
  for (const tc of owners) {
    it(tc.name, () => {
      expect(ownedBy(deepFreeze(tc.slice), svc)).toBe(tc.want);
    });
  }
});

describe('A.7.8 trigger-time annotation', () => {
  const cases: { name: string; before: Record<string, string> | undefined; t: string | null | undefined; want: Record<string, string> | undefined }[] = [
    { name: 'set when known', before: undefined, t: '2026-01-01T00:00:00Z', want: { [ANNOTATION_TRIGGER_TIME]: '2026-01-01T00:00:00Z' } },
    { name: 'replaced when known', before: { [ANNOTATION_TRIGGER_TIME]: 'old', x: 'y' }, t: '2026-01-02T00:00:00Z', want: { [ANNOTATION_TRIGGER_TIME]: '2026-01-02T00:00:00Z', x: 'y' } },
    { name: 'removed when null', before: { [ANNOTATION_TRIGGER_TIME]: 'old', x: 'y' }, t: null, want: { x: 'y' } },
    { name: 'removed when undefined; nothing left -> no annotations', before: { [ANNOTATION_TRIGGER_TIME]: 'old' }, t: undefined, want: undefined },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(withTriggerTime(tc.before ? deepFreeze(tc.before) : undefined, tc.t)).toEqual(tc.want);
    });
  }
  it('stampTriggerTime drops the annotations field when empty and keeps the rest of the slice', () => {
    const s = deepFreeze({ ...makeSlice('s', []), metadata: { ...makeSlice('s', []).metadata, annotations: { [ANNOTATION_TRIGGER_TIME]: 'x' } } });
    const out = stampTriggerTime(s, null);
    expect(out.metadata).not.toHaveProperty('annotations');
    expect(out.metadata.name).toBe('s');
  });
});

describe('A.9 new slice', () => {
  it('generateName <service>-, empty name, namespace, labels, owner, apiVersion and kind', () => {
    const svc = deepFreeze(makeService('web', { namespace: 'prod', uid: 'u' }));
    const s = newSlice({ service: svc, addressType: 'IPv4', ports: [], endpoints: [], managedBy: MANAGED_BY_CONTROLLER });
    expect(s).toEqual({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: '',
        generateName: 'web-',
        namespace: 'prod',
        labels: { [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u', controller: true, blockOwnerDeletion: true }],
      },
      addressType: 'IPv4',
      endpoints: [],
      ports: [],
    });
  });
});
