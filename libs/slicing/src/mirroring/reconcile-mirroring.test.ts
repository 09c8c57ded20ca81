import type { Endpoints, EndpointSlice, EndpointSubset } from '@slicemesh/model';
import {
  ANNOTATION_LAST_APPLIED,
  ANNOTATION_LEADER,
  ANNOTATION_TRIGGER_TIME,
  InvalidArgumentError,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SKIP_MIRROR,
  MANAGED_BY_CONTROLLER,
  MANAGED_BY_MIRRORING,
} from '@slicemesh/model';
import type { EndpointsOpts } from '@slicemesh/testing';
import { deepFreeze, ipv4Range, makeEndpoints, makeService, makeSlice, makeSubset } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { sliceName } from '../slice-name.ts';
import { portSetKey } from './mirror-ports.ts';
import type { MirrorInput, MirrorResult } from './reconcile-mirroring.ts';
import { reconcileMirroring } from './reconcile-mirroring.ts';

const HTTP = { name: 'http', port: 80, protocol: 'TCP' as const };
const HTTPS = { name: 'https', port: 443, protocol: 'TCP' as const };
const SVC = makeService('ext', { selector: null });
const ONE_ADDRESS = [makeSubset([HTTP], ['10.0.0.1'])];

const ep = (o: EndpointsOpts = {}): Endpoints => makeEndpoints('ext', { subsets: ONE_ADDRESS, ...o });

/** What the reconciler would write for `endpoints` from scratch, renamed: a perfectly mirrored slice. */
function mirroredNow(endpoints: Endpoints, name = 'ext-a'): EndpointSlice[] {
  const first = reconcileMirroring({ endpoints, service: SVC, existingSlices: [] });
  return first.plan.create.map((s, i) => ({ ...s, metadata: { ...s.metadata, name: i === 0 ? name : `${name}${i}` } }));
}

function only(slices: EndpointSlice[]): EndpointSlice {
  const [s] = slices;
  if (!s || slices.length !== 1) throw new Error(`expected one slice, got ${slices.length}`);
  return s;
}

/** A slice managed by the mirroring controller with arbitrary content. */
function mirrorSlice(name: string, subsets: EndpointSubset[], addressType: 'IPv4' | 'IPv6' = 'IPv4'): EndpointSlice {
  const base = only(mirroredNow(makeEndpoints('ext', { subsets }), name).filter((s) => s.addressType === addressType));
  return base;
}

const foreign = makeSlice('ext-foreign', [{ addresses: ['10.0.0.1'], conditions: { ready: true } }], { service: 'ext', managedBy: MANAGED_BY_CONTROLLER, ports: [HTTP] });

const names = (slices: readonly EndpointSlice[]): string[] => slices.map((s) => s.metadata.name);
const counts = (r: MirrorResult): number[] => [r.plan.create.length, r.plan.update.length, r.plan.delete.length, r.plan.unchanged.length];

interface Case {
  name: string;
  input: MirrorInput;
  /** [create, update, delete, unchanged] */
  counts: number[];
  check?: (r: MirrorResult, input: MirrorInput) => void;
}

const identical = only(mirroredNow(ep()));

const cases: Case[] = [
  // --- B.1: when mirrored; otherwise every mirrored slice goes ---
  {
    name: 'B.1 a missing Endpoints deletes every mirrored slice and nothing else',
    input: { endpoints: null, service: SVC, existingSlices: [identical, foreign] },
    counts: [0, 0, 1, 0],
    check: (r) => {
      expect(names(r.plan.delete)).toEqual(['ext-a']);
      expect(r.mirrored).toBe(false);
      expect(r.events).toEqual([]);
    },
  },
  {
    name: 'B.1.1 skip-mirror "true" deletes the mirrored slices',
    input: { endpoints: ep({ labels: { [LABEL_SKIP_MIRROR]: 'true' } }), service: SVC, existingSlices: [identical] },
    counts: [0, 0, 1, 0],
    check: (r) => expect(r.mirrored).toBe(false),
  },
  {
    name: 'B.1.1 skip-mirror "false" is mirrored',
    input: { endpoints: ep({ labels: { [LABEL_SKIP_MIRROR]: 'false' } }), service: SVC, existingSlices: [] },
    counts: [1, 0, 0, 0],
    check: (r) => expect(r.mirrored).toBe(true),
  },
  {
    name: 'B.1.1 skip-mirror "invalid" is mirrored (and the label is copied)',
    input: { endpoints: ep({ labels: { [LABEL_SKIP_MIRROR]: 'invalid' } }), service: SVC, existingSlices: [] },
    counts: [1, 0, 0, 0],
    check: (r) => expect(only([...r.plan.create]).metadata.labels?.[LABEL_SKIP_MIRROR]).toBe('invalid'),
  },
  {
    name: 'B.1.2 a leader-election annotation deletes the mirrored slices',
    input: { endpoints: ep({ annotations: { [ANNOTATION_LEADER]: '{"holderIdentity":"a"}' } }), service: SVC, existingSlices: [identical] },
    counts: [0, 0, 1, 0],
  },
  {
    name: 'B.1.3 a missing Service deletes the mirrored slices',
    input: { endpoints: ep(), service: null, existingSlices: [identical, foreign] },
    counts: [0, 0, 1, 0],
  },
  {
    name: 'B.1.4 a Service that gained a selector deletes the mirrored slices, never the controller ones',
    input: { endpoints: ep(), service: makeService('ext', { selector: { app: 'ext' } }), existingSlices: [identical, foreign] },
    counts: [0, 0, 1, 0],
    check: (r) => expect(names(r.plan.delete)).toEqual(['ext-a']),
  },
  {
    name: 'B.1.4 an ExternalName Service with a nil selector is mirrored',
    input: { endpoints: ep(), service: makeService('ext', { selector: null, spec: { type: 'ExternalName', externalName: 'x.example.com' } }), existingSlices: [] },
    counts: [1, 0, 0, 0],
  },
  // --- B.2 at the reconcile level ---
  {
    name: 'B.2.6 1001 addresses: one slice of 1000, never a second slice, plus the overflow warning',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], ipv4Range(1001))] }), service: SVC, existingSlices: [] },
    counts: [1, 0, 0, 0],
    check: (r) => {
      expect(only([...r.plan.create]).endpoints).toHaveLength(1000);
      expect(r.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'TooManyAddressesToMirror']]);
    },
  },
  {
    name: 'B.2.1 two subsets with different ports and the same address: one slice with both ports',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], ['10.0.0.1']), makeSubset([HTTPS], ['10.0.0.1'])] }), service: SVC, existingSlices: [] },
    counts: [1, 0, 0, 0],
    check: (r) => expect(only([...r.plan.create]).ports.map((p) => p.port)).toEqual([80, 443]),
  },
  {
    name: 'B.2.1 two subsets with the same ports: one slice with both addresses',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], ['10.0.0.1']), makeSubset([HTTP], ['10.0.0.2'])] }), service: SVC, existingSlices: [] },
    counts: [1, 0, 0, 0],
    check: (r) => expect(only([...r.plan.create]).endpoints).toHaveLength(2),
  },
  {
    name: 'B.2.2 a dual-stack subset: an IPv4 and an IPv6 slice',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], ['10.0.0.1', 'fd00::1'])] }), service: SVC, existingSlices: [] },
    counts: [2, 0, 0, 0],
    check: (r) => expect(r.plan.create.map((s) => [s.addressType, s.endpoints[0]?.addresses[0]])).toEqual([['IPv4', '10.0.0.1'], ['IPv6', 'fd00::1']]),
  },
  {
    name: 'B.2.2 an IPv6-only subset: only an IPv6 slice',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], ['fd00::1', 'fd00::2'])] }), service: SVC, existingSlices: [] },
    counts: [1, 0, 0, 0],
    check: (r) => expect(only([...r.plan.create]).addressType).toBe('IPv6'),
  },
  {
    name: 'B.2.5 an FQDN address is skipped with an InvalidIPAddress warning counting it',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], ['10.0.0.1', 'db.example.com'])] }), service: SVC, existingSlices: [] },
    counts: [1, 0, 0, 0],
    check: (r) => expect(r.events).toEqual([{ type: 'Warning', reason: 'InvalidIPAddress', message: 'Skipped 1 invalid IP addresses when mirroring to EndpointSlices' }]),
  },
  // --- B.3: per-group reconcile ---
  {
    name: 'B.3.1 an Endpoints without addresses deletes the existing mirrored slices',
    input: { endpoints: ep({ subsets: [] }), service: SVC, existingSlices: [identical] },
    counts: [0, 0, 1, 0],
  },
  {
    name: 'B.3.1 no addresses and no slices: empty plan',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP])] }), service: SVC, existingSlices: [] },
    counts: [0, 0, 0, 0],
  },
  {
    name: 'B.3.1 a family that lost its addresses loses its slice',
    input: { endpoints: ep(), service: SVC, existingSlices: [identical, mirrorSlice('ext-v6', [makeSubset([HTTP], ['fd00::1'])], 'IPv6')] },
    counts: [0, 0, 1, 1],
    check: (r) => expect(names(r.plan.delete)).toEqual(['ext-v6']),
  },
  {
    name: 'B.3.2 an identical slice is left alone',
    input: { endpoints: ep(), service: SVC, existingSlices: [identical] },
    counts: [0, 0, 0, 1],
    check: (r) => expect(r.plan.unchanged[0]).toBe(identical),
  },
  {
    name: 'B.3.2 extra slices of a group are deleted; the first by name is kept',
    input: { endpoints: ep(), service: SVC, existingSlices: [{ ...identical, metadata: { ...identical.metadata, name: 'ext-c' } }, { ...identical, metadata: { ...identical.metadata, name: 'ext-b' } }, identical] },
    counts: [0, 0, 2, 1],
    check: (r) => {
      expect(names(r.plan.unchanged)).toEqual(['ext-a']);
      expect(names(r.plan.delete)).toEqual(['ext-b', 'ext-c']);
    },
  },
  {
    name: 'B.3.2 a changed endpoint (ready flipped) rewrites the slice in place',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], [], ['10.0.0.1'])] }), service: SVC, existingSlices: [identical] },
    counts: [0, 1, 0, 0],
    check: (r) => {
      expect(names(r.plan.update)).toEqual(['ext-a']);
      expect(r.plan.update[0]?.endpoints[0]?.conditions).toEqual({ ready: false });
    },
  },
  {
    name: 'B.3.2 an added address rewrites the slice in place',
    input: { endpoints: ep({ subsets: [makeSubset([HTTP], ['10.0.0.1', '10.0.0.2'])] }), service: SVC, existingSlices: [identical] },
    counts: [0, 1, 0, 0],
  },
  {
    name: 'B.3.2 only the resourceVersion of a targetRef differing is no change',
    input: {
      endpoints: ep({ subsets: [makeSubset([HTTP], [{ ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'p', uid: 'u', resourceVersion: '2' } }])] }),
      service: SVC,
      existingSlices: mirroredNow(ep({ subsets: [makeSubset([HTTP], [{ ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'p', uid: 'u', resourceVersion: '1' } }])] })),
    },
    counts: [0, 0, 0, 1],
  },
  {
    name: 'B.3.2 label drift on the Endpoints rewrites the slice in place with the new labels',
    input: { endpoints: ep({ labels: { team: 'db' } }), service: SVC, existingSlices: [identical] },
    counts: [0, 1, 0, 0],
    check: (r) => expect(r.plan.update[0]?.metadata.labels).toEqual({ team: 'db', [LABEL_SERVICE_NAME]: 'ext', [LABEL_MANAGED_BY]: MANAGED_BY_MIRRORING }),
  },
  {
    name: 'B.3.2 an extra label on the slice rewrites it',
    input: { endpoints: ep(), service: SVC, existingSlices: [{ ...identical, metadata: { ...identical.metadata, labels: { ...identical.metadata.labels, stray: 'x' } } }] },
    counts: [0, 1, 0, 0],
  },
  {
    name: 'B.3.2 annotation drift rewrites the slice in place',
    input: { endpoints: ep({ annotations: { note: 'v2' } }), service: SVC, existingSlices: mirroredNow(ep({ annotations: { note: 'v1' } })) },
    counts: [0, 1, 0, 0],
    check: (r) => expect(r.plan.update[0]?.metadata.annotations).toEqual({ note: 'v2' }),
  },
  {
    name: 'B.3.2 trigger-time and last-applied annotations on the Endpoints are ignored',
    input: { endpoints: ep({ annotations: { [ANNOTATION_TRIGGER_TIME]: '2026-01-01T00:00:00Z', [ANNOTATION_LAST_APPLIED]: '{}' } }), service: SVC, existingSlices: [identical] },
    counts: [0, 0, 0, 1],
  },
  {
    name: 'B.3.2 a last-applied annotation on the slice is removed by a rewrite',
    input: { endpoints: ep(), service: SVC, existingSlices: [{ ...identical, metadata: { ...identical.metadata, annotations: { [ANNOTATION_LAST_APPLIED]: '{}' } } }] },
    counts: [0, 1, 0, 0],
    check: (r) => expect(r.plan.update[0]?.metadata.annotations).toBeUndefined(),
  },
  {
    name: 'B.3.2 Endpoints labels with reserved keys do not cause an update on every sync',
    input: {
      endpoints: ep({ labels: { [LABEL_SERVICE_NAME]: 'other', [LABEL_MANAGED_BY]: 'someone' } }),
      service: SVC,
      existingSlices: mirroredNow(ep({ labels: { [LABEL_SERVICE_NAME]: 'other', [LABEL_MANAGED_BY]: 'someone' } })),
    },
    counts: [0, 0, 0, 1],
    check: (r) => expect(r.plan.unchanged[0]?.metadata.labels).toEqual({ [LABEL_SERVICE_NAME]: 'ext', [LABEL_MANAGED_BY]: MANAGED_BY_MIRRORING }),
  },
  {
    name: 'B.3.2 a slice owned by a different Endpoints uid (recreated Endpoints) is rewritten with the new owner',
    input: { endpoints: ep({ uid: 'uid-new' }), service: SVC, existingSlices: mirroredNow(ep({ uid: 'uid-old' })) },
    counts: [0, 1, 0, 0],
    check: (r) => expect(r.plan.update[0]?.metadata.ownerReferences?.map((o) => o.uid)).toEqual(['uid-new']),
  },
  {
    name: 'B.3.2 the same owner uid without controller/blockOwnerDeletion is left alone',
    input: {
      endpoints: ep(),
      service: SVC,
      existingSlices: [{ ...identical, metadata: { ...identical.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name: 'ext', uid: 'uid-ep-ext' }] } }],
    },
    counts: [0, 0, 0, 1],
  },
  {
    name: 'B.3.2 a slice without ownerReferences is left alone when otherwise identical (Endpoints uid empty)',
    input: { endpoints: ep({ uid: '' }), service: SVC, existingSlices: [{ ...identical, metadata: { ...identical.metadata, ownerReferences: [] } }] },
    counts: [0, 0, 0, 1],
  },
  {
    name: 'B.3.3 no existing slice: one create with generateName <name>- and a deterministic name',
    input: { endpoints: ep(), service: SVC, existingSlices: [foreign] },
    counts: [1, 0, 0, 0],
    check: (r) => {
      const s = only([...r.plan.create]);
      expect(s.metadata.generateName).toBe('ext-');
      expect(s.metadata.name).toBe(sliceName('ext', 'uid-ep-ext', `IPv4/${portSetKey([HTTP])}`, new Set(['ext-foreign'])));
    },
  },
  {
    name: 'B.3.4 a port change recycles the old slice: one update keeping the name, no create, no delete',
    input: { endpoints: ep({ subsets: [makeSubset([HTTPS], ['10.0.0.1'])] }), service: SVC, existingSlices: [identical] },
    counts: [0, 1, 0, 0],
    check: (r) => {
      const s = only([...r.plan.update]);
      expect(s.metadata.name).toBe('ext-a');
      expect(s.metadata.generateName).toBeUndefined();
      expect(s.ports).toEqual([{ name: 'https', port: 443, protocol: 'TCP' }]);
    },
  },
  {
    name: 'B.3.4 each address type recycles its own deletes (IPv4 into IPv4, IPv6 into IPv6)',
    input: {
      endpoints: ep({ subsets: [makeSubset([HTTPS], ['10.0.0.1', 'fd00::2'])] }),
      service: SVC,
      existingSlices: [identical, mirrorSlice('ext-v6', [makeSubset([HTTP], ['fd00::1'])], 'IPv6')],
    },
    counts: [0, 2, 0, 0],
    check: (r) => expect(r.plan.update.map((s) => [s.metadata.name, s.addressType])).toEqual([['ext-a', 'IPv4'], ['ext-v6', 'IPv6']]),
  },
  {
    name: 'B.3.4 an IPv6 delete is never recycled into an IPv4 create',
    input: { endpoints: ep({ subsets: [makeSubset([HTTPS], ['10.0.0.1'])] }), service: SVC, existingSlices: [mirrorSlice('ext-v6', [makeSubset([HTTP], ['fd00::1'])], 'IPv6')] },
    counts: [1, 0, 1, 0],
    check: (r) => expect(names(r.plan.delete)).toEqual(['ext-v6']),
  },
  {
    name: 'B.3.4 two creates against three deletes of one family: two updates (in group order) and one delete',
    input: {
      endpoints: ep({ subsets: [makeSubset([{ name: 'a', port: 1 }], ['10.0.0.1']), makeSubset([{ name: 'b', port: 2 }], ['10.0.0.2'])] }),
      service: SVC,
      existingSlices: [
        mirrorSlice('ext-x', [makeSubset([{ name: 'x', port: 7 }], ['10.0.0.1'])]),
        mirrorSlice('ext-y', [makeSubset([{ name: 'y', port: 8 }], ['10.0.0.1'])]),
        mirrorSlice('ext-z', [makeSubset([{ name: 'z', port: 9 }], ['10.0.0.1'])]),
      ],
    },
    counts: [0, 2, 1, 0],
    check: (r) => {
      expect(r.plan.update.map((s) => [s.metadata.name, s.ports[0]?.name])).toEqual([['ext-x', 'a'], ['ext-y', 'b']]);
      expect(names(r.plan.delete)).toEqual(['ext-z']);
    },
  },
  {
    name: 'B.3.5 while the Endpoints is being deleted creates are skipped',
    input: { endpoints: ep({ deletionTimestamp: '2026-01-02T00:00:00Z' }), service: SVC, existingSlices: [] },
    counts: [0, 0, 0, 0],
    check: (r) => expect(r.mirrored).toBe(true),
  },
  {
    name: 'B.3.5 while the Endpoints is being deleted updates, recycling and deletes still happen',
    input: {
      endpoints: ep({ deletionTimestamp: '2026-01-02T00:00:00Z', subsets: [makeSubset([HTTPS], ['10.0.0.1'])] }),
      service: SVC,
      existingSlices: [identical, mirrorSlice('ext-v6', [makeSubset([HTTP], ['fd00::1'])], 'IPv6')],
    },
    counts: [0, 1, 1, 0],
  },
  {
    name: 'only slices managed by the mirroring controller are touched, even with a matching group',
    input: { endpoints: ep({ subsets: [] }), service: SVC, existingSlices: [{ ...identical, metadata: { ...identical.metadata, labels: { [LABEL_MANAGED_BY]: 'custom' } } }] },
    counts: [0, 0, 0, 0],
  },
  {
    name: 'deprecated IP or FQDN mirrored slices are deleted, never recycled into IPv4',
    input: { endpoints: ep(), service: SVC, existingSlices: [{ ...identical, addressType: 'IP', metadata: { ...identical.metadata, name: 'ext-old' } }] },
    counts: [1, 0, 1, 0],
  },
];

describe('reconcileMirroring', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const input = deepFreeze(tc.input);
      const r = reconcileMirroring(input);
      expect(counts(r)).toEqual(tc.counts);
      tc.check?.(r, input);
    });
  }
});

describe('reconcileMirroring metadata (B.4)', () => {
  it('B.4 a created slice carries labels, filtered annotations, the Endpoints owner and the discovery apiVersion', () => {
    const endpoints = ep({ namespace: 'apps', labels: { team: 'db', [LABEL_SERVICE_NAME]: 'spoofed' }, annotations: { note: 'x', [ANNOTATION_TRIGGER_TIME]: 't', [ANNOTATION_LAST_APPLIED]: '{}' } });
    const r = reconcileMirroring(deepFreeze({ endpoints, service: SVC, existingSlices: [] }));
    const s = only([...r.plan.create]);
    expect({ ...s, metadata: { ...s.metadata, name: '' } }).toEqual({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: '',
        generateName: 'ext-',
        namespace: 'apps',
        labels: { team: 'db', [LABEL_SERVICE_NAME]: 'ext', [LABEL_MANAGED_BY]: MANAGED_BY_MIRRORING },
        annotations: { note: 'x' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name: 'ext', uid: 'uid-ep-ext', controller: true, blockOwnerDeletion: true }],
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    });
  });
});

describe('reconcileMirroring naming and determinism', () => {
  const dual = ep({ uid: '', namespace: 'apps', subsets: [makeSubset([HTTP], ['10.0.0.1', 'fd00::1']), makeSubset([HTTPS], ['10.0.0.2'])] });
  const input: MirrorInput = { endpoints: dual, service: SVC, existingSlices: [foreign] };

  it('an Endpoints without uid is named from <ns>/<name>, each group from its own origin, avoiding taken names', () => {
    const r = reconcileMirroring(deepFreeze(input));
    const taken = new Set(['ext-foreign']);
    const want = r.plan.create.map((s) => {
      const n = sliceName('ext', 'apps/ext', `${s.addressType}/${portSetKey(s.ports)}`, taken);
      taken.add(n);
      return n;
    });
    expect(names(r.plan.create)).toEqual(want);
    expect(new Set(want).size).toBe(3);
  });

  it('the same input gives the same plan whatever the order of existing slices', () => {
    const slices = [identical, { ...identical, metadata: { ...identical.metadata, name: 'ext-b' } }, mirrorSlice('ext-v6', [makeSubset([HTTP], ['fd00::9'])], 'IPv6'), foreign];
    const a = reconcileMirroring(deepFreeze({ ...input, existingSlices: slices }));
    const b = reconcileMirroring(deepFreeze({ ...input, existingSlices: [...slices].reverse() }));
    expect(b).toEqual(a);
  });

  it('applying the plan and reconciling again changes nothing', () => {
    const r = reconcileMirroring(deepFreeze(input));
    const again = reconcileMirroring(deepFreeze({ ...input, existingSlices: [...r.plan.create, foreign] }));
    expect(counts(again)).toEqual([0, 0, 0, 3]);
  });
});

describe('reconcileMirroring maxEndpointsPerSubset', () => {
  const bad = [0, -1, 1.5, 1001, Number.NaN];
  for (const max of bad) {
    it(`throws InvalidArgumentError for ${max}`, () => {
      expect(() => reconcileMirroring({ endpoints: ep(), service: SVC, existingSlices: [], maxEndpointsPerSubset: max })).toThrow(InvalidArgumentError);
    });
  }
  const good = [
    { max: 1, want: 1 },
    { max: 1000, want: 3 },
    { max: undefined, want: 3 },
  ];
  for (const tc of good) {
    it(`accepts ${tc.max} and caps each subset at it`, () => {
      const r = reconcileMirroring(deepFreeze({ endpoints: ep({ subsets: [makeSubset([HTTP], ipv4Range(3))] }), service: SVC, existingSlices: [], maxEndpointsPerSubset: tc.max }));
      expect(only([...r.plan.create]).endpoints).toHaveLength(tc.want);
    });
  }
});
