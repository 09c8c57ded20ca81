// In-memory fakes of the hints ports and small builders, for unit tests only.

import type { HintDecision, HintsIngestRows, PublishedView } from '@slicemesh/db';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import type { IngestStore, KvPort, ServiceRecordStore, ServiceStateReader, ViewIntent } from './ports.ts';
import type { ServiceKey } from './published-index.ts';
import { serviceKeyOf } from './published-index.ts';

// The topology builders are shared with the core's tests.
export { autoService, ep, threeZoneNodes, threeZoneSlice } from '@slicemesh/testing';

export class FakeKv implements KvPort {
  private readonly name: string;
  private readonly journal?: string[];
  readonly values = new Map<string, { readonly revision: number; readonly text: string }>();
  readonly ops: string[] = [];
  revision = 0;
  /** Makes put/delete of matching keys throw. */
  failOn: ((op: 'put' | 'delete', key: string) => boolean) | undefined;

  constructor(name: string, journal?: string[]) {
    this.name = name;
    this.journal = journal;
  }

  put(key: string, text: string): Promise<number> {
    if (this.failOn?.('put', key)) return Promise.reject(new Error(`${this.name}: put ${key} failed`));
    this.revision++;
    this.values.set(key, { revision: this.revision, text });
    this.ops.push(`put ${key}`);
    this.journal?.push(`${this.name}.put`);
    return Promise.resolve(this.revision);
  }

  delete(key: string): Promise<void> {
    if (this.failOn?.('delete', key)) return Promise.reject(new Error(`${this.name}: delete ${key} failed`));
    this.values.delete(key);
    this.ops.push(`delete ${key}`);
    this.journal?.push(`${this.name}.delete`);
    return Promise.resolve();
  }

  revisions(filter: string): Promise<ReadonlyMap<string, number>> {
    const prefix = filter.endsWith('>') ? filter.slice(0, -1) : filter;
    const matches = (k: string) => (filter.endsWith('>') ? k.startsWith(prefix) : k === filter);
    return Promise.resolve(new Map([...this.values].filter(([k]) => matches(k)).map(([k, v]) => [k, v.revision])));
  }

  json(key: string): unknown {
    const v = this.values.get(key);
    return v === undefined ? undefined : JSON.parse(v.text);
  }
}

/** The state, the record and the ingest store in one in-memory object. */
export class FakeStore implements ServiceRecordStore, IngestStore {
  private readonly journal?: string[];
  readonly services = new Map<string, Service>();
  readonly slices = new Map<string, EndpointSlice>(); // ns/name
  /** Other controllers' slices, ns/name. */
  readonly foreign = new Map<string, EndpointSlice>();
  readonly decisions = new Map<string, readonly HintDecision[]>(); // ns/service
  readonly published = new Map<string, PublishedView>();
  readonly nodes = new Map<string, Node>();
  readonly offsets = new Map<string, number>();
  /** Makes the next matching write throw. */
  failOn: ((op: 'intent' | 'published' | 'apply') => boolean) | undefined;

  constructor(journal?: string[]) {
    this.journal = journal;
  }

  setService(s: Service): void {
    this.services.set(serviceKeyOf(s.metadata.namespace ?? '', s.metadata.name), s);
  }

  setSlices(...slices: EndpointSlice[]): void {
    for (const s of slices) this.slices.set(`${s.metadata.namespace ?? ''}/${s.metadata.name}`, s);
  }

  setForeignSlices(...slices: EndpointSlice[]): void {
    for (const s of slices) this.foreign.set(`${s.metadata.namespace ?? ''}/${s.metadata.name}`, s);
  }

  slicesOf(key: ServiceKey, from: ReadonlyMap<string, EndpointSlice> = this.slices): readonly EndpointSlice[] {
    const [namespace, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    return [...from.values()]
      .filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.['kubernetes.io/service-name'] === name)
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  }

  recordIntent(namespace: string, name: string, intent: ViewIntent): Promise<void> {
    if (this.failOn?.('intent')) return Promise.reject(new Error('intent failed'));
    if (intent.decisions !== undefined) this.decisions.set(serviceKeyOf(namespace, name), intent.decisions);
    for (const p of intent.pending) this.published.set(p.key, { key: p.key, revision: 0, digest: null });
    this.journal?.push('db.intent');
    return Promise.resolve();
  }

  recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void> {
    if (this.failOn?.('published')) return Promise.reject(new Error('recordPublished failed'));
    for (const v of confirmed) this.published.set(v.key, v);
    for (const k of deleted) this.published.delete(k);
    this.journal?.push('db.published');
    return Promise.resolve();
  }

  commitIngest(consumer: string, seq: number, rows: HintsIngestRows): Promise<boolean> {
    if (this.failOn?.('apply')) return Promise.reject(new Error('apply failed'));
    if (seq <= (this.offsets.get(consumer) ?? 0)) return Promise.resolve(false);
    for (const d of rows.slices?.deletes ?? []) this.slices.delete(`${d.namespace}/${d.name}`);
    this.setSlices(...(rows.slices?.upserts ?? []));
    for (const d of rows.foreignSlices?.deletes ?? []) this.foreign.delete(`${d.namespace}/${d.name}`);
    this.setForeignSlices(...(rows.foreignSlices?.upserts ?? []));
    for (const n of rows.nodes?.deletes ?? []) this.nodes.delete(n);
    for (const n of rows.nodes?.upserts ?? []) this.nodes.set(n.metadata.name, n);
    for (const d of rows.services?.deletes ?? []) this.services.delete(serviceKeyOf(d.namespace, d.name));
    for (const v of rows.services?.upserts ?? []) this.setService(v);
    this.offsets.set(consumer, seq);
    return Promise.resolve(true);
  }
}

/** FakeStore as the reconciler's state reader. */
export function readerOf(store: FakeStore): ServiceStateReader {
  return {
    service: (key) => store.services.get(key),
    slices: (key) => store.slicesOf(key),
    foreignSlices: (key) => store.slicesOf(key, store.foreign),
    decisions: (key) => store.decisions.get(key) ?? [],
  };
}
