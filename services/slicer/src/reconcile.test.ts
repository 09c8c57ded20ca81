import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeEndpoints, makeNode, makePod, makeService, makeSubset } from '@slicemesh/testing';
import type { ReconcileOutcome, SliceChangedMessage } from './reconcile.ts';
import { makeReconcileID, parseReconcileID } from './reconcile.ts';
import { Harness } from './testing/harness.ts';

const web = makeService('web', { selector: { app: 'web' } });
const pod = (name: string, ip: string, o: { nodeName?: string; ready?: boolean } = {}) => makePod(name, { labels: { app: 'web' }, ips: [ip], ...o });
const ip = (s: EndpointSlice): string[] => s.endpoints.flatMap((e) => e.addresses).sort();

interface Case {
  readonly name: string;
  readonly max?: number;
  /** Run before the reconcile under test (each step: put objects, then reconcile if `sync`). */
  readonly script: (h: Harness) => Promise<void>;
  readonly key?: string;
  /** `cleared`: whether the mark is gone after the reconcile. */
  readonly want: Partial<Pick<ReconcileOutcome, 'result' | 'created' | 'updated' | 'deleted'>> & { readonly errors?: number; readonly cleared?: boolean };
  /** Checks on the stored slices after the reconcile. */
  readonly slices?: (slices: readonly EndpointSlice[]) => void;
}

const cases: readonly Case[] = [
  {
    name: 'a Service that is not marked dirty is not reconciled (someone got there first)',
    script: async () => {},
    want: { result: 'clean', created: 0, cleared: true },
  },
  {
    name: 'A.7 a Service with ready pods gets one slice with every endpoint',
    script: async (h) => {
      await h.put(makeNode('node-1'));
      await h.put(web);
      await h.put(pod('a', '10.0.0.1'));
      await h.put(pod('b', '10.0.0.2'));
    },
    want: { result: 'changed', created: 1, updated: 0, deleted: 0, cleared: true, errors: 0 },
    slices: (s) => {
      expect(s).toHaveLength(1);
      expect(ip(s[0] as EndpointSlice)).toEqual(['10.0.0.1', '10.0.0.2']);
      expect(s[0]?.metadata.labels).toMatchObject({ [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER });
      expect(s[0]?.metadata.generation).toBe(1);
      expect(s[0]?.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    },
  },
  {
    name: 'A.7.4 a Service without pods gets one placeholder slice',
    script: async (h) => h.put(web),
    want: { result: 'changed', created: 1 },
    slices: (s) => expect(s.map((x) => x.endpoints.length)).toEqual([0]),
  },
  {
    name: 'A.8 max endpoints per slice splits the endpoints',
    max: 2,
    script: async (h) => {
      await h.put(makeNode('node-1'));
      await h.put(web);
      for (let i = 1; i <= 5; i++) await h.put(pod(`p${i}`, `10.0.0.${i}`));
    },
    want: { result: 'changed', created: 3 },
    slices: (s) => expect(s.map((x) => x.endpoints.length).sort()).toEqual([1, 2, 2]),
  },
  {
    name: 'A.3.4 a pod on an unknown node is skipped, the plan is written and the mark kept for the retry',
    script: async (h) => {
      await h.put(makeNode('node-1'));
      await h.put(web);
      await h.put(pod('a', '10.0.0.1'));
      await h.put(pod('b', '10.0.0.2', { nodeName: 'ghost' }));
    },
    want: { result: 'changed', created: 1, errors: 1, cleared: false },
    slices: (s) => expect(s.flatMap(ip)).toEqual(['10.0.0.1']),
  },
  {
    name: 'A.1.3 a deleted Service loses its slices',
    script: async (h) => {
      await h.put(web);
      await h.reconcile('web');
      await h.put(web, 'Deleted.v1');
    },
    want: { result: 'changed', created: 0, deleted: 1 },
    slices: (s) => expect(s).toEqual([]),
  },
  {
    name: 'a reconcile with nothing new writes nothing and clears the mark',
    script: async (h) => {
      await h.put(makeNode('node-1'));
      await h.put(web);
      await h.put(pod('a', '10.0.0.1'));
      await h.reconcile('web');
      await h.put(makeNode('node-1', { cpu: '8' })); // irrelevant for slices, but we mark by hand below
      h.dirty.mark('default/web', h.seq);
    },
    want: { result: 'unchanged', created: 0, updated: 0, deleted: 0, cleared: true },
  },
  {
    name: 'A.6 a readiness change rewrites the slice in place (same name, next generation)',
    script: async (h) => {
      await h.put(makeNode('node-1'));
      await h.put(web);
      await h.put(pod('a', '10.0.0.1'));
      await h.reconcile('web');
      await h.put(pod('a', '10.0.0.1', { ready: false }));
    },
    want: { result: 'changed', created: 0, updated: 1 },
    slices: (s) => {
      expect(s).toHaveLength(1);
      expect(s[0]?.metadata.generation).toBe(2);
      expect(s[0]?.endpoints[0]?.conditions.ready).toBe(false);
    },
  },
  {
    name: 'B mirroring: a selectorless Service with Endpoints gets a mirrored slice',
    script: async (h) => {
      await h.put(makeService('legacy', { selector: null }));
      await h.put(makeEndpoints('legacy', { subsets: [makeSubset([{ name: 'http', port: 80, protocol: 'TCP' }], ['10.1.0.1', '10.1.0.2'])] }));
    },
    key: 'legacy',
    want: { result: 'changed', created: 1 },
    slices: (s) => {
      expect(s).toHaveLength(1);
      expect(s[0]?.metadata.labels?.[LABEL_MANAGED_BY]).toBe(MANAGED_BY_MIRRORING);
      expect(ip(s[0] as EndpointSlice)).toEqual(['10.1.0.1', '10.1.0.2']);
    },
  },
  {
    name: 'B.1.4 a mirrored Service that gains a selector loses its mirrored slices',
    script: async (h) => {
      await h.put(makeService('legacy', { selector: null }));
      await h.put(makeEndpoints('legacy', { subsets: [makeSubset([{ port: 80 }], ['10.1.0.1'])] }));
      await h.reconcile('legacy');
      await h.put(makeService('legacy', { selector: { app: 'none' } }));
    },
    key: 'legacy',
    want: { result: 'changed', created: 1, deleted: 1 },
    slices: (s) => expect(s.map((x) => x.metadata.labels?.[LABEL_MANAGED_BY])).toEqual([MANAGED_BY_CONTROLLER]),
  },
  {
    name: 'B.1 Endpoints without a Service are not mirrored',
    script: async (h) => {
      await h.put(makeEndpoints('legacy', { subsets: [makeSubset([{ port: 80 }], ['10.1.0.1'])] }));
      h.dirty.mark('default/legacy', h.seq);
    },
    key: 'legacy',
    want: { result: 'unchanged', created: 0 },
    slices: (s) => expect(s).toEqual([]),
  },
];

describe('reconcileBatch', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const h = new Harness(tc.max !== undefined ? { max: tc.max } : {});
      await tc.script(h);
      const out = await h.reconcile(tc.key ?? 'web');
      const { errors, cleared, ...rest } = tc.want;
      expect(out).toMatchObject(rest);
      if (cleared !== undefined) expect(h.dirty.has(`default/${tc.key ?? 'web'}`)).toBe(!cleared);
      if (errors !== undefined) expect(out.errors).toHaveLength(errors);
      tc.slices?.(deepFreeze(h.slices()));
    });
  }

  it('writes one SLICES message and one replay record per changing reconcile, in the same transaction', async () => {
    const h = new Harness();
    await h.put(makeNode('node-1'));
    await h.put(web);
    await h.put(pod('a', '10.0.0.1'));
    const out = await h.reconcile('web');
    expect(h.store.outbox).toHaveLength(1);
    const row = h.store.outbox[0];
    expect(row?.subject).toBe('stage.slices.c1.0.default.web');
    expect(row?.msgId).toBe(`c1/outbox/${row?.id}`);
    const payload = row?.payload as SliceChangedMessage;
    expect(payload).toMatchObject({ type: 'SliceChanged.v1', cluster: 'c1', namespace: 'default', service: 'web', deletes: [], reconcileID: out.reconcileID });
    expect(payload.upserts).toEqual(h.slices());
    // from: the first mark (the Service at seq 2); to: the partition offset; nodesTo: the node offset.
    expect(payload.kubeSeq).toEqual({ from: 2, to: 3, nodesTo: 1 });
    expect(h.store.reconciles).toMatchObject([{ service: 'web', kubeSeqFrom: 2, kubeSeqTo: 3, reconcileId: 'p3n1-1', created: 1, updated: 0, deleted: 0 }]);
    expect(h.dirty.list()).toEqual([]);

    h.dirty.mark('default/web', 3);
    expect((await h.reconcile('web')).result).toBe('unchanged');
    expect(h.store.outbox).toHaveLength(1); // nothing changed, nothing announced
    expect(h.store.reconciles).toHaveLength(2); // but the reconcile is on record
  });

  it('a failed transaction writes nothing and leaves the mark', async () => {
    const h = new Harness();
    await h.put(web);
    h.store.failNext = 1;
    await expect(h.reconcile('web')).rejects.toThrow(/injected/);
    expect(h.slices()).toEqual([]);
    expect(h.dirty.list()).toHaveLength(1);
    expect(h.state.slicesOf('default', 'web')).toEqual([]); // memory put back
  });

  it('A.10.1 the first sync annotates the Service creationTimestamp as trigger time', async () => {
    const h = new Harness();
    await h.put(makeService('web', { creationTimestamp: '2026-03-04T05:06:07Z' }));
    await h.reconcile('web');
    expect(h.slices()[0]?.metadata.annotations?.[ANNOTATION_TRIGGER_TIME]).toBe('2026-03-04T05:06:07Z');
  });

  it('replaying the same events into a fresh store gives the same slices, names included', async () => {
    const run = async (): Promise<readonly EndpointSlice[]> => {
      const h = new Harness({ max: 2 });
      await h.put(makeNode('node-1'));
      await h.put(web);
      for (let i = 1; i <= 5; i++) await h.put(pod(`p${i}`, `10.0.0.${i}`));
      await h.reconcile('web');
      await h.put(pod('p6', '10.0.0.6'));
      await h.put(pod('p2', '10.0.0.2'), 'Deleted.v1');
      await h.reconcile('web');
      return h.slices();
    };
    const a = await run();
    expect(a.length).toBeGreaterThan(1);
    expect(await run()).toEqual(a);
  });
});

describe('reconcile IDs', () => {
  const cases = [
    { to: 0, nodesTo: 0, random: 'abc' },
    { to: 123456, nodesTo: 7, random: '0f3a9c11' },
  ];
  for (const tc of cases) {
    it(`carry the view bounds p${tc.to}n${tc.nodesTo}`, () => expect(parseReconcileID(makeReconcileID(tc.to, tc.nodesTo, tc.random))).toEqual({ to: tc.to, nodesTo: tc.nodesTo }));
  }
  it('other IDs carry no bounds', () => expect(parseReconcileID('3f2a-uuid')).toBeUndefined());
});
