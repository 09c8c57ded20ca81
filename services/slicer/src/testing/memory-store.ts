// An in-memory fake of the slicer's store for unit tests. It keeps the rules that matter to the
// slicer: the newer-resourceVersion guard, offsets that only move forward, slices stored as
// given, and all-or-nothing commits (a failing commit changes nothing).

import type { EndpointSlice } from '@slicemesh/model';
import { supersedes } from '@slicemesh/model';
import type { KubeObjectRow, ReconcileRecord } from '@slicemesh/db';
import type { IngestCommit, SliceWrites, SlicerSnapshot, SlicerStore } from '../ports.ts';

export interface StoredOutbox {
  readonly id: number;
  readonly subject: string;
  readonly msgId: string;
  readonly payload: unknown;
}

const objKey = (k: { cluster: string; kind: string; namespace: string; name: string }): string => JSON.stringify([k.cluster, k.kind, k.namespace, k.name]);
const sliceKey = (namespace: string, name: string): string => `${namespace}/${name}`;

export class MemoryStore implements SlicerStore {
  readonly #objects = new Map<string, KubeObjectRow>();
  readonly #offsets = new Map<string, number>();
  readonly #slices = new Map<string, EndpointSlice>();
  readonly #outbox: StoredOutbox[] = [];
  readonly #reconciles: (ReconcileRecord & { readonly id: number })[] = [];
  #nextId = 1;
  /** Fails the next N commits before applying them (to test retries). */
  failNext = 0;
  /** Commits made, by kind. */
  readonly commits = { ingest: 0, slices: 0 };

  get objects(): readonly KubeObjectRow[] {
    return [...this.#objects.values()];
  }
  get offsets(): ReadonlyMap<string, number> {
    return this.#offsets;
  }
  get outbox(): readonly StoredOutbox[] {
    return this.#outbox;
  }
  get reconciles(): readonly (ReconcileRecord & { readonly id: number })[] {
    return this.#reconciles;
  }
  /** Stored slices sorted by namespace/name. */
  get slices(): readonly EndpointSlice[] {
    return [...this.#slices.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
  }

  async loadSnapshot(consumers: readonly string[]): Promise<SlicerSnapshot> {
    return {
      offsets: new Map(consumers.map((c) => [c, this.#offsets.get(c) ?? 0])),
      objects: [...this.#objects.values()],
      slices: this.slices,
    };
  }

  async commitIngest(batch: IngestCommit): Promise<void> {
    this.#maybeFail();
    for (const r of batch.rows) {
      const stored = this.#objects.get(objKey(r));
      if (stored === undefined || supersedes(r, stored)) this.#objects.set(objKey(r), r);
    }
    this.#offsets.set(batch.consumer, Math.max(this.#offsets.get(batch.consumer) ?? 0, batch.offset));
    this.commits.ingest++;
  }

  async commitSlices(w: SliceWrites): Promise<void> {
    this.#maybeFail();
    for (const d of w.deletes) this.#slices.delete(sliceKey(d.namespace, d.name));
    for (const s of w.upserts) this.#slices.set(sliceKey(s.metadata.namespace ?? '', s.metadata.name), s);
    for (const m of w.outbox) {
      const id = this.#nextId++;
      this.#outbox.push({ id, subject: m.subject, msgId: typeof m.msgId === 'function' ? m.msgId(id) : typeof m.msgId === 'string' ? m.msgId : `${m.msgId.prefix}${id}`, payload: m.payload });
    }
    for (const r of w.records) this.#reconciles.push({ ...r, id: this.#nextId++ });
    this.commits.slices++;
  }

  #maybeFail(): void {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('injected store failure');
    }
  }
}
