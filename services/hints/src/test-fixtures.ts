// In-memory fakes of the hints ports and small builders, for unit tests only.

import type { HintDecision, PublishedView } from '@slicemesh/db';
import type { Endpoint, EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE } from '@slicemesh/model';
import { makeNode, makeService, makeSlice } from '@slicemesh/testing';
import type { KubeEnvelope, SliceChangedV1 } from './messages.ts';
import { isStaleVersion } from './node-topology.ts';
import type { IngestStore, KvPort, ServiceStateStore, ViewIntent } from './ports.ts';
import { serviceKeyOf } from './published-index.ts';

/** A ready endpoint in `zone` on `node`, with optional zone hints. */
export function ep(ip: string, zone: string | undefined, node: string, o: { ready?: boolean; forZones?: readonly string[] } = {}): Endpoint {
  return {
    addresses: [ip],
    conditions: { ready: o.ready ?? true, serving: o.ready ?? true, terminating: false },
    nodeName: node,
    ...(zone !== undefined ? { zone } : {}),
    ...(o.forZones ? { hints: { forZones: o.forZones.map((name) => ({ name })) } } : {}),
  };
}

/** Three zones a/b/c with one node each (4 CPUs), named n-a, n-b, n-c. */
export function threeZoneNodes(): Node[] {
  return ['a', 'b', 'c'].map((z) => makeNode(`n-${z}`, { zone: `zone-${z}` }));
}

/** Service `web` with topology-mode: Auto. */
export function autoService(name = 'web', namespace = 'default'): Service {
  return makeService(name, { namespace, annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } });
}

/** One slice of `web` with one ready endpoint per zone a/b/c (on n-a/n-b/n-c). */
export function threeZoneSlice(name = 'web-abc', service = 'web'): EndpointSlice {
  return makeSlice(name, [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b'), ep('10.0.0.3', 'zone-c', 'n-c')], { service });
}

export class FakeKv implements KvPort {
  readonly values = new Map<string, { readonly revision: number; readonly text: string }>();
  readonly ops: string[] = [];
  revision = 0;
  /** Makes put/delete of matching keys throw. */
  failOn: ((op: 'put' | 'delete', key: string) => boolean) | undefined;

  constructor(private readonly name: string, private readonly journal?: string[]) {}

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

  keys(filter: string): Promise<readonly string[]> {
    const prefix = filter.endsWith('>') ? filter.slice(0, -1) : filter;
    return Promise.resolve([...this.values.keys()].filter((k) => (filter.endsWith('>') ? k.startsWith(prefix) : k === filter)).sort());
  }

  json(key: string): unknown {
    const v = this.values.get(key);
    return v === undefined ? undefined : JSON.parse(v.text);
  }
}

export class FakeStore implements ServiceStateStore, IngestStore {
  readonly services = new Map<string, Service>();
  readonly slices = new Map<string, EndpointSlice>(); // ns/name
  readonly decisions = new Map<string, readonly HintDecision[]>(); // ns/service
  readonly published = new Map<string, PublishedView>();
  readonly nodes = new Map<string, Node>();
  readonly offsets = new Map<string, number>();
  /** Makes the next matching write throw. */
  failOn: ((op: 'intent' | 'published' | 'apply') => boolean) | undefined;

  constructor(private readonly journal?: string[]) {}

  setService(s: Service): void {
    this.services.set(serviceKeyOf(s.metadata.namespace ?? '', s.metadata.name), s);
  }

  setSlices(...slices: EndpointSlice[]): void {
    for (const s of slices) this.slices.set(`${s.metadata.namespace ?? ''}/${s.metadata.name}`, s);
  }

  loadService(namespace: string, name: string): Promise<Service | undefined> {
    return Promise.resolve(this.services.get(serviceKeyOf(namespace, name)));
  }

  loadSlices(namespace: string, name: string): Promise<readonly EndpointSlice[]> {
    const out = [...this.slices.values()]
      .filter((s) => s.metadata.namespace === namespace && s.metadata.labels?.['kubernetes.io/service-name'] === name)
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    return Promise.resolve(out);
  }

  loadDecisions(namespace: string, name: string): Promise<readonly HintDecision[]> {
    return Promise.resolve(this.decisions.get(serviceKeyOf(namespace, name)) ?? []);
  }

  recordIntent(namespace: string, name: string, intent: ViewIntent): Promise<void> {
    if (this.failOn?.('intent')) return Promise.reject(new Error('intent failed'));
    if (intent.decisions !== undefined) this.decisions.set(serviceKeyOf(namespace, name), intent.decisions);
    for (const p of intent.pending) this.published.set(p.key, { key: p.key, revision: 0, body: p.body });
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

  #once(consumer: string, seq: number, apply: () => void): Promise<boolean> {
    if (this.failOn?.('apply')) return Promise.reject(new Error('apply failed'));
    if (seq <= (this.offsets.get(consumer) ?? 0)) return Promise.resolve(false);
    apply();
    this.offsets.set(consumer, seq);
    return Promise.resolve(true);
  }

  applySliceChanged(consumer: string, seq: number, msg: SliceChangedV1): Promise<boolean> {
    return this.#once(consumer, seq, () => {
      for (const n of msg.deletes) this.slices.delete(`${msg.namespace}/${n}`);
      this.setSlices(...msg.upserts);
    });
  }

  applyNodeEvent(consumer: string, seq: number, env: KubeEnvelope<Node>): Promise<boolean> {
    return this.#once(consumer, seq, () => {
      const name = env.object.metadata.name;
      const stored = this.nodes.get(name);
      if (stored !== undefined && isStaleVersion(env.object.metadata.resourceVersion, stored.metadata.resourceVersion)) return;
      if (env.type === 'Deleted.v1') this.nodes.delete(name);
      else this.nodes.set(name, env.object);
    });
  }

  applyServiceEvent(consumer: string, seq: number, env: KubeEnvelope<Service>): Promise<boolean> {
    return this.#once(consumer, seq, () => {
      const key = serviceKeyOf(env.object.metadata.namespace ?? '', env.object.metadata.name);
      if (env.type === 'Deleted.v1') this.services.delete(key);
      else this.services.set(key, env.object);
    });
  }
}
