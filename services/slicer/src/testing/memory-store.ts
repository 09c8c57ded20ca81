// An in-memory fake of the slicer's stores for unit tests. It keeps the rules that matter to
// the slicer: the newer-resourceVersion guard, marks that only clear up to a sequence, the
// slice generation rules, and all-or-nothing transactions (state is copied, then swapped in).

import type { EndpointSlice, Node, Pod, Service } from '@slicemesh/model';
import type { DirtyService, KubeObjectRow, OutboxMessage, ReconcileRecord, ServiceKey } from '@slicemesh/db';
import { supersedes } from '@slicemesh/db';
import type { IngestStore, IngestTx, ReconcileStore, ReconcileTx } from '../ports.ts';
import { applySliceChangesInMemory } from '../slice-memory.ts';

export interface StoredOutbox {
  readonly id: number;
  readonly subject: string;
  readonly msgId: string;
  readonly payload: unknown;
}

interface State {
  objects: Map<string, KubeObjectRow>;
  offsets: Map<string, number>;
  dirty: Map<string, DirtyService>;
  /** Per cluster: `<ns>/<name>` → slice. */
  slices: Map<string, Map<string, EndpointSlice>>;
  outbox: StoredOutbox[];
  reconciles: (ReconcileRecord & { readonly id: number })[];
  nextId: number;
}

const objKey = (k: { cluster: string; kind: string; namespace: string; name: string }): string => JSON.stringify([k.cluster, k.kind, k.namespace, k.name]);
const svcKey = (k: ServiceKey): string => JSON.stringify([k.cluster, k.namespace, k.name]);
const byName = <T extends { readonly metadata: { readonly name: string } }>(a: T, b: T): number => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);

function copy(s: State): State {
  return {
    objects: new Map(s.objects),
    offsets: new Map(s.offsets),
    dirty: new Map(s.dirty),
    slices: new Map([...s.slices].map(([c, m]) => [c, new Map(m)])),
    outbox: [...s.outbox],
    reconciles: [...s.reconciles],
    nextId: s.nextId,
  };
}

/** The fake; `state` is exposed read-only for assertions. */
export class MemoryStore {
  #state: State = { objects: new Map(), offsets: new Map(), dirty: new Map(), slices: new Map(), outbox: [], reconciles: [], nextId: 1 };
  /** Fails the next N transactions before running them (to test retries). */
  failNext = 0;

  get objects(): readonly KubeObjectRow[] {
    return [...this.#state.objects.values()];
  }
  get offsets(): ReadonlyMap<string, number> {
    return this.#state.offsets;
  }
  get dirty(): readonly DirtyService[] {
    return [...this.#state.dirty.values()].sort((a, b) => (svcKey(a) < svcKey(b) ? -1 : 1));
  }
  get outbox(): readonly StoredOutbox[] {
    return this.#state.outbox;
  }
  get reconciles(): readonly (ReconcileRecord & { readonly id: number })[] {
    return this.#state.reconciles;
  }
  slicesOf(cluster: string): readonly EndpointSlice[] {
    return [...(this.#state.slices.get(cluster)?.values() ?? [])].sort(byName);
  }

  /** Seeds a slice as if written earlier (generation as given). */
  seedSlice(cluster: string, slice: EndpointSlice): void {
    const m = this.#state.slices.get(cluster) ?? new Map<string, EndpointSlice>();
    m.set(`${slice.metadata.namespace ?? ''}/${slice.metadata.name}`, slice);
    this.#state.slices.set(cluster, m);
  }

  async #run<T>(fn: (s: State) => Promise<T>): Promise<T> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('memory store: injected failure');
    }
    const draft = copy(this.#state);
    const out = await fn(draft);
    this.#state = draft;
    return out;
  }

  readonly ingest: IngestStore = { transaction: (fn) => this.#run((s) => fn(ingestTx(s))) };
  readonly reconcile: ReconcileStore = {
    snapshot: (fn) => this.#run((s) => fn(reconcileTx(s))),
    listDirty: async () => this.dirty,
  };
}

function live<T>(s: State, kind: string, cluster: string, namespace?: string): T[] {
  return [...s.objects.values()]
    .filter((r) => r.kind === kind && r.cluster === cluster && !r.deleted && (namespace === undefined || r.namespace === namespace))
    .sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((r) => r.body as T);
}

function ingestTx(s: State): IngestTx {
  return {
    getOffset: async (c) => s.offsets.get(c) ?? 0,
    loadObject: async (k) => s.objects.get(objKey(k)),
    upsertObject: async (row) => {
      const stored = s.objects.get(objKey(row));
      if (stored !== undefined && !supersedes(row, stored)) return false;
      s.objects.set(objKey(row), row);
      return true;
    },
    servicesInNamespace: async (cluster, ns) => live<Service>(s, 'Service', cluster, ns),
    podsOnNode: async (cluster, node) => live<Pod>(s, 'Pod', cluster).filter((p) => p.spec.nodeName === node),
    markDirty: async (keys, seq) => {
      for (const k of keys) {
        const d = s.dirty.get(svcKey(k));
        s.dirty.set(svcKey(k), { cluster: k.cluster, namespace: k.namespace, name: k.name, sinceSeq: Math.min(d?.sinceSeq ?? seq, seq), lastSeq: Math.max(d?.lastSeq ?? seq, seq) });
      }
    },
    advanceOffset: async (c, seq) => {
      if (seq > (s.offsets.get(c) ?? 0)) s.offsets.set(c, seq);
    },
  };
}

function reconcileTx(s: State): ReconcileTx {
  return {
    loadDirty: async (k) => s.dirty.get(svcKey(k)),
    getOffset: async (c) => s.offsets.get(c) ?? 0,
    loadObject: async (k) => s.objects.get(objKey(k)),
    selectPods: async (cluster, ns, selector) =>
      live<Pod>(s, 'Pod', cluster, ns).filter((p) => Object.entries(selector).every(([k, v]) => p.metadata.labels?.[k] === v)),
    loadNodes: async (cluster) => live<Node>(s, 'Node', cluster),
    loadSlices: async (cluster, ns, service) =>
      [...(s.slices.get(cluster)?.values() ?? [])]
        .filter((x) => (x.metadata.namespace ?? '') === ns && x.metadata.labels?.['kubernetes.io/service-name'] === service)
        .sort(byName),
    sliceNamesInNamespace: async (cluster, ns) =>
      [...(s.slices.get(cluster)?.values() ?? [])].filter((x) => (x.metadata.namespace ?? '') === ns).map((x) => x.metadata.name).sort(),
    applySliceChanges: async (changes) => {
      const m = s.slices.get(changes.cluster) ?? new Map<string, EndpointSlice>();
      s.slices.set(changes.cluster, m);
      return applySliceChangesInMemory(m, changes);
    },
    appendOutbox: async (rows: readonly OutboxMessage[]) =>
      rows.map((r) => {
        const id = s.nextId++;
        const msgId = typeof r.msgId === 'function' ? r.msgId(id) : r.msgId;
        s.outbox.push({ id, subject: r.subject, msgId, payload: r.payload });
        return { id, msgId };
      }),
    recordReconcile: async (rec) => {
      const id = s.nextId++;
      s.reconciles.push({ ...rec, id });
      return id;
    },
    clearDirty: async (k, upTo) => {
      const d = s.dirty.get(svcKey(k));
      if (d === undefined) return false;
      if (d.lastSeq <= upTo) {
        s.dirty.delete(svcKey(k));
        return true;
      }
      s.dirty.set(svcKey(k), { ...d, sinceSeq: Math.max(d.sinceSeq, upTo + 1) });
      return false;
    },
  };
}
