import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { deepFreeze, makeEndpoints, makeNode, makePod, makeService, makeSubset } from '@slicemesh/testing';
import type { SliceChangedMessage } from './reconcile.ts';
import type { ReplayInput } from './replay.ts';
import { comparableSlice, replayService } from './replay.ts';
import { Harness, NODES, PART } from './testing/harness.ts';

const web = makeService('web', { selector: { app: 'web' } });
const pod = (name: string, ip: string, o: { ready?: boolean; readyTransition?: string } = {}) => makePod(name, { labels: { app: 'web' }, ips: [ip], ...o });

/** The replay input for `service` from what the harness recorded. */
function inputOf(h: Harness, service = 'web'): ReplayInput {
  const nodes = h.log.filter((m) => m.subject.includes('.node.'));
  return deepFreeze({
    cluster: 'c1',
    namespace: 'default',
    service,
    partitions: 1,
    prefix: '',
    managedBy: MANAGED_BY_CONTROLLER,
    maxEndpointsPerSlice: h.deps.settings.maxEndpointsPerSlice,
    records: h.store.reconciles.filter((r) => r.service === service),
    namespaceLog: h.log.filter((m) => !nodes.includes(m)).map(({ seq, subject, data }) => ({ seq, subject, data })),
    nodeLog: nodes.map(({ seq, subject, data }) => ({ seq, subject, data })),
    published: h.store.outbox.map((r) => r.payload as SliceChangedMessage).filter((p) => p.service === service),
    stored: h.slices().filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === service),
  });
}

interface Case {
  readonly name: string;
  readonly service?: string;
  readonly script: (h: Harness) => Promise<void>;
  /** Edits the recorded input before replaying; undefined = replay as recorded. */
  readonly tamper?: (input: ReplayInput) => ReplayInput;
  /** Expected problem fragments; [] = the replay matches. */
  readonly problems: readonly RegExp[];
}

async function busyService(h: Harness): Promise<void> {
  await h.put(makeNode('node-1', { zone: 'a' }));
  await h.put(web);
  for (let i = 1; i <= 5; i++) await h.put(pod(`p${i}`, `10.0.0.${i}`));
  await h.reconcile('web');
  await h.put(pod('p2', '10.0.0.2'), 'Deleted.v1');
  await h.put(pod('p3', '10.0.0.3', { ready: false, readyTransition: '2026-01-01T00:05:00Z' }));
  await h.put(pod('p9', '10.0.0.9'));
  await h.reconcile('web');
}

/** Edits the first stored slice. */
const editStored = (f: (s: EndpointSlice) => EndpointSlice) => (i: ReplayInput): ReplayInput => ({ ...i, stored: i.stored.map((s, n) => (n === 0 ? f(s) : s)) });

const cases: readonly Case[] = [
  { name: 'a Service reconciled several times replays to the same slices, names included', script: busyService, problems: [] },
  {
    name: 'a Service deleted at the end replays to no slices',
    script: async (h) => {
      await busyService(h);
      await h.put(web, 'Deleted.v1');
      await h.reconcile('web');
    },
    problems: [],
  },
  {
    name: 'mirroring replays too',
    service: 'legacy',
    script: async (h) => {
      await h.put(makeService('legacy', { selector: null }));
      await h.put(makeEndpoints('legacy', { subsets: [makeSubset([{ port: 80 }], ['10.1.0.1'])] }));
      await h.reconcile('legacy');
      await h.put(makeEndpoints('legacy', { subsets: [makeSubset([{ port: 80 }], ['10.1.0.1', '10.1.0.2'])] }));
      await h.reconcile('legacy');
    },
    problems: [],
  },
  {
    name: 'each reconcile is replayed at its own node bound, not at the latest',
    script: async (h) => {
      await h.put(makeNode('node-1', { zone: 'a' }));
      await h.put(web);
      await h.put(pod('p1', '10.0.0.1'));
      await h.reconcile('web'); // sees zone a
      await h.put(makeNode('node-1', { zone: 'b' }));
      await h.reconcile('web'); // sees zone b
    },
    problems: [],
  },
  {
    name: 'the trigger-time annotation is not compared (its state is per process, A.10)',
    script: async (h) => {
      await busyService(h);
      await h.restart();
      await h.put(pod('p7', '10.0.0.7', { readyTransition: '2026-01-01T00:09:00Z' }));
      await h.reconcile('web');
    },
    problems: [],
  },
  {
    name: 'a stored slice whose endpoints differ is reported',
    script: busyService,
    tamper: editStored((s) => ({ ...s, endpoints: s.endpoints.slice(1) })),
    problems: [/final state: slice web-\w+ differs/],
  },
  {
    name: 'a stored slice the log does not explain is reported',
    script: busyService,
    tamper: (i) => ({ ...i, stored: [...i.stored, { ...(i.stored[0] as EndpointSlice), metadata: { ...(i.stored[0] as EndpointSlice).metadata, name: 'web-extra' } }] }),
    problems: [/final state: slice web-extra is recorded but the replay did not produce it/],
  },
  {
    name: 'a record whose counts differ is reported',
    script: busyService,
    tamper: (i) => ({ ...i, records: i.records.map((r, n) => (n === 0 ? { ...r, created: r.created + 1 } : r)) }),
    problems: [/reconcile \d+ \(p\d+n\d+-1\): created: replayed \d+, recorded \d+/],
  },
  {
    name: 'a changing reconcile without its SLICES message is reported',
    script: busyService,
    tamper: (i) => ({ ...i, published: i.published.slice(1) }),
    problems: [/no SLICES message was recorded/],
  },
  {
    name: 'a SLICES message whose content differs is reported',
    script: busyService,
    tamper: (i) => ({ ...i, published: i.published.map((p) => ({ ...p, deletes: [...p.deletes, 'web-ghost'] })) }),
    problems: [/SLICES deletes: replayed/, /SLICES deletes: replayed/],
  },
];

describe('replayService', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const h = new Harness({ max: 2 });
      await tc.script(h);
      const recorded = inputOf(h, tc.service);
      expect(recorded.records.length).toBeGreaterThan(0);
      const report = replayService(tc.tamper ? tc.tamper(recorded) : recorded);
      expect(report.problems).toHaveLength(tc.problems.length);
      tc.problems.forEach((re, i) => expect(report.problems[i]).toMatch(re));
      expect(report.ok).toBe(tc.problems.length === 0);
      if (tc.problems.length === 0) expect(report.slices.map(comparableSlice)).toEqual(recorded.stored.map(comparableSlice));
    });
  }

  it('with no records and nothing stored there is nothing to check', () => {
    const report = replayService({ cluster: 'c1', namespace: 'default', service: 'web', partitions: 1, prefix: '', managedBy: MANAGED_BY_CONTROLLER, maxEndpointsPerSlice: 100, records: [], namespaceLog: [], nodeLog: [], published: [], stored: [] });
    expect(report).toEqual({ ok: true, steps: [], problems: [], slices: [] });
  });
});

describe('comparableSlice', () => {
  const base = (deepFreeze({ kind: 'EndpointSlice', metadata: { name: 's', annotations: { [ANNOTATION_TRIGGER_TIME]: 't1', keep: 'v' } }, addressType: 'IPv4', endpoints: [], ports: [] }) as EndpointSlice);
  const cases = [
    { name: 'ignores the trigger-time annotation', other: { ...base, metadata: { ...base.metadata, annotations: { [ANNOTATION_TRIGGER_TIME]: 't2', keep: 'v' } } }, equal: true },
    { name: 'ignores key order', other: { ports: [], endpoints: [], addressType: 'IPv4', metadata: { annotations: { keep: 'v' }, name: 's' }, kind: 'EndpointSlice' } as EndpointSlice, equal: true },
    { name: 'sees other annotations', other: { ...base, metadata: { ...base.metadata, annotations: { keep: 'w' } } }, equal: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(comparableSlice(tc.other) === comparableSlice(base)).toBe(tc.equal));
});

describe('replayService from a snapshot (a purged log)', () => {
  /** busyService with a snapshot of the projection taken after its first reconcile. */
  async function withSnapshot(): Promise<{ h: Harness; base: NonNullable<ReplayInput['base']> }> {
    const h = new Harness();
    await h.put(makeNode('node-1', { zone: 'a' }));
    await h.put(web);
    for (let i = 1; i <= 5; i++) await h.put(pod(`p${i}`, `10.0.0.${i}`));
    await h.reconcile('web');
    const base = {
      seq: h.offsets.get(PART) ?? 0,
      nodesSeq: h.offsets.get(NODES) ?? 0,
      reconcilesTo: Math.max(...h.store.reconciles.map((r) => r.id)),
      objects: h.store.objects.map((o) => ({ ...o })),
      slices: h.slices().map((s) => JSON.parse(JSON.stringify(s)) as EndpointSlice),
    };
    await h.put(pod('p2', '10.0.0.2'), 'Deleted.v1');
    await h.put(pod('p3', '10.0.0.3', { ready: false, readyTransition: '2026-01-01T00:05:00Z' }));
    await h.put(makeNode('node-1', { zone: 'b' }));
    await h.put(pod('p9', '10.0.0.9'));
    await h.reconcile('web');
    return { h, base };
  }

  it('replays only the records after the snapshot, with the messages after it, to the same slices', async () => {
    const { h, base } = await withSnapshot();
    const full = replayService(inputOf(h));
    // The head of the log is gone: only what came after the snapshot is left.
    const input = inputOf(h);
    const cut = { ...input, base, namespaceLog: input.namespaceLog.filter((m) => m.seq > base.seq), nodeLog: input.nodeLog.filter((m) => m.seq > base.nodesSeq) };
    const r = replayService(cut);
    expect(r.problems).toEqual([]);
    expect(r.steps.map((s) => s.id)).toEqual(h.store.reconciles.filter((x) => x.id > base.reconcilesTo).map((x) => x.id));
    expect(r.from).toEqual({ seq: base.seq, nodesSeq: base.nodesSeq });
    expect(r.slices.map(comparableSlice)).toEqual(full.slices.map(comparableSlice));
  });

  it('a snapshot whose slices are not what the records continue from shows as a difference', async () => {
    const { h, base } = await withSnapshot();
    const wrong = { ...base, slices: base.slices.map((s) => ({ ...s, endpoints: s.endpoints.slice(1) })) };
    expect(replayService({ ...inputOf(h), base: wrong }).ok).toBe(false);
  });

  it('a record that read the log before the snapshot is reported, not replayed', async () => {
    const { h, base } = await withSnapshot();
    const input = inputOf(h);
    const records = input.records.map((r) => (r.id > base.reconcilesTo ? { ...r, kubeSeqTo: base.seq - 1 } : r));
    const report = replayService({ ...input, records, base });
    expect(report.problems.join('\n')).toMatch(/before the snapshot at \d+ \(nodes \d+\): not replayable/);
  });
});
