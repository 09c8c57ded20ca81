// Test helpers for the agent's unit and integration tests (never imported by production code):
// an in-memory KV change source that behaves like kvWatchJson, an in-memory Node subject that
// behaves like followSubject, KV entry and KUBE Node message builders, endpoint and slice
// builders, and a fully faked agent harness.

import type { RawKubeMessage } from '@slicemesh/contracts';
import { DELETED, UPSERTED, changeEvent, kubeNodeSubject } from '@slicemesh/contracts';
import type { Endpoint, EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import type { KvChange } from '@slicemesh/nats';
import { svcKey, viewKey } from '@slicemesh/nats';
import { makeNode, makeService, makeSlice } from '@slicemesh/testing';
import type { KvChangeSource } from './agent.ts';
import type { NodeMessageSource } from './node-follower.ts';

/**
 * A KV bucket in memory. Each watch yields the current entries matching the filter, calls
 * onInitialDone after the consumer handled the last one (at once when none match), then
 * yields pushed changes until aborted or `endWatches` is called.
 */
export class FakeKvSource implements KvChangeSource {
  /** Every filter a watch was started with, in order. */
  readonly filters: string[] = [];
  readonly #entries = new Map<string, KvChange>();
  #revision = 0;
  #listeners = new Set<(c: KvChange | Error | null) => void>();
  #hold: Promise<void> | null = null;
  #release: () => void = () => {};

  /** Sets (or, with op DEL, deletes) a key; running watches see it as a change. */
  put(change: Omit<KvChange, 'revision'>): void {
    const c = { ...change, revision: ++this.#revision };
    if (c.op === 'PUT') this.#entries.set(c.key, c);
    else this.#entries.delete(c.key);
    for (const l of this.#listeners) l(c);
  }

  /** Replaces the stored entries without telling running watches (as if changed while disconnected). */
  replaceSilently(changes: readonly Omit<KvChange, 'revision'>[]): void {
    this.#entries.clear();
    for (const c of changes) this.#entries.set(c.key, { ...c, revision: ++this.#revision });
  }

  /** Delays onInitialDone of the next watches until `releaseInitial`. */
  holdInitial(): void {
    this.#hold = new Promise((r) => (this.#release = r));
  }

  releaseInitial(): void {
    this.#hold = null;
    this.#release();
  }

  /** Ends every running watch, with `err` or normally. */
  endWatches(err?: Error): void {
    for (const l of this.#listeners) l(err ?? null);
  }

  async *watch(filter: string, opts: { readonly onInitialDone: () => void; readonly signal: AbortSignal }): AsyncIterable<KvChange> {
    this.filters.push(filter);
    const prefix = filter.endsWith('>') ? filter.slice(0, -1) : filter;
    const matches = (k: string) => (filter.endsWith('>') ? k.startsWith(prefix) : k === filter);
    const queue: (KvChange | Error | null)[] = [];
    let wake: () => void = () => {};
    const listener = (c: KvChange | Error | null) => {
      if (c === null || c instanceof Error || matches(c.key)) {
        queue.push(c);
        wake();
      }
    };
    const onAbort = () => listener(null);
    this.#listeners.add(listener);
    opts.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const initial = [...this.#entries.values()].filter((c) => matches(c.key)).sort((a, b) => a.revision - b.revision);
      for (const c of initial) yield c;
      if (this.#hold) {
        const aborted = new Promise<void>((r) => opts.signal.addEventListener('abort', () => r(), { once: true }));
        await Promise.race([this.#hold, aborted]);
      }
      if (opts.signal.aborted) return;
      opts.onInitialDone();
      for (;;) {
        if (queue.length === 0) await new Promise<void>((r) => (wake = r));
        const next = queue.shift();
        if (next === undefined) continue;
        if (next === null) return;
        if (next instanceof Error) throw next;
        yield next;
      }
    } finally {
      this.#listeners.delete(listener);
      opts.signal.removeEventListener('abort', onAbort);
    }
  }
}

/** A svc bucket PUT for `service` of `cluster`. */
export function svcPut(cluster: string, service: Service): Omit<KvChange, 'revision'> {
  return { key: svcKey({ cluster, namespace: service.metadata.namespace ?? 'default', name: service.metadata.name }), op: 'PUT', value: JSON.parse(JSON.stringify(service)) as unknown };
}

/** A views bucket PUT of `slice` in `zone`'s view. */
export function viewPut(cluster: string, zone: string, slice: EndpointSlice): Omit<KvChange, 'revision'> {
  const service = slice.metadata.labels?.['kubernetes.io/service-name'] ?? '';
  return {
    key: viewKey({ cluster, zone, namespace: slice.metadata.namespace ?? 'default', service, slice: slice.metadata.name }),
    op: 'PUT',
    value: JSON.parse(JSON.stringify(slice)) as unknown,
  };
}

/** A delete marker for `key`. */
export function del(key: string): Omit<KvChange, 'revision'> {
  return { key, op: 'DEL', value: undefined };
}

export interface EpOpts {
  readonly node?: string;
  readonly zone?: string;
  readonly hints?: readonly string[];
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
}

/** A ready endpoint at `ip`, with optional node, zone and zone hints. */
export function endpoint(ip: string, o: EpOpts = {}): Endpoint {
  return {
    addresses: [ip],
    conditions: { ready: o.ready ?? true, serving: o.serving ?? o.ready ?? true, terminating: o.terminating ?? false },
    ...(o.node ? { nodeName: o.node } : {}),
    ...(o.zone ? { zone: o.zone } : {}),
    ...(o.hints ? { hints: { forZones: o.hints.map((name) => ({ name })) } } : {}),
  };
}

/** A TCP ClusterIP service `ns/name` on `clusterIP`, port 80 → 8080 ("http"). */
export function service(name: string, clusterIP: string, o: { readonly namespace?: string; readonly nodePort?: number } = {}): Service {
  const ports = [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' as const, ...(o.nodePort ? { nodePort: o.nodePort } : {}) }];
  return makeService(name, { namespace: o.namespace ?? 'default', clusterIP, ports, ...(o.nodePort ? { spec: { type: 'NodePort' as const } } : {}) });
}

/** A slice of service `svc` holding `endpoints` on port 8080, optionally stamped with a trigger time. */
export function slice(name: string, svc: string, endpoints: readonly Endpoint[], o: { readonly namespace?: string; readonly triggerTime?: string } = {}): EndpointSlice {
  const s = makeSlice(name, endpoints, { service: svc, namespace: o.namespace ?? 'default' });
  return o.triggerTime === undefined ? s : { ...s, metadata: { ...s.metadata, annotations: { [ANNOTATION_TRIGGER_TIME]: o.triggerTime } } };
}

/**
 * One Node's KUBE subject in memory. Each follow yields the last message (if any), calls
 * onInitialDone, then yields pushed messages until aborted or `fail` is called.
 */
export class FakeNodeSource implements NodeMessageSource {
  /** How many follows were started. */
  follows = 0;
  #last: RawKubeMessage | null = null;
  #listeners = new Set<(m: RawKubeMessage | Error | null) => void>();

  /** Stores `msg` as the subject's last message; running follows see it. */
  publish(msg: RawKubeMessage): void {
    this.#last = msg;
    for (const l of this.#listeners) l(msg);
  }

  /** Ends every running follow with `err` (the next follow still finds the last message). */
  fail(err: Error): void {
    for (const l of this.#listeners) l(err);
  }

  /** The next `n` follows reject at once with `err` (KUBE cannot be read). */
  failFollows(n: number, err: Error): void {
    this.#failing = { n, err };
  }

  #failing: { n: number; readonly err: Error } = { n: 0, err: new Error('unused') };

  async *follow(opts: { readonly onInitialDone: () => void; readonly signal: AbortSignal }): AsyncIterable<RawKubeMessage> {
    this.follows++;
    if (this.#failing.n > 0) {
      this.#failing.n--;
      throw this.#failing.err;
    }
    const queue: (RawKubeMessage | Error | null)[] = [];
    let wake: () => void = () => {};
    const listener = (m: RawKubeMessage | Error | null) => {
      queue.push(m);
      wake();
    };
    const onAbort = () => listener(null);
    this.#listeners.add(listener);
    opts.signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (this.#last !== null) yield this.#last;
      if (opts.signal.aborted) return;
      opts.onInitialDone();
      for (;;) {
        if (queue.length === 0) await new Promise<void>((r) => (wake = r));
        const next = queue.shift();
        if (next === undefined) continue;
        if (next === null) return;
        if (next instanceof Error) throw next;
        yield next;
      }
    } finally {
      this.#listeners.delete(listener);
      opts.signal.removeEventListener('abort', onAbort);
    }
  }
}

let nodeVersion = 100;

/**
 * The KUBE message the watcher publishes for Node `name` with zone label `zone` (undefined: no
 * label), as followSubject hands it over; `deleted` makes it a delete.
 */
export function nodeMessage(cluster: string, name: string, zone: string | undefined, o: { readonly deleted?: boolean; readonly prefix?: string; readonly node?: Node } = {}): RawKubeMessage {
  const base = o.node ?? makeNode(name, zone === undefined ? {} : { zone });
  const node: Node = { ...base, metadata: { ...base.metadata, resourceVersion: String(++nodeVersion) } };
  const event = changeEvent(o.deleted ? DELETED : UPSERTED, cluster, node, '2026-01-01T00:00:00Z');
  return { subject: kubeNodeSubject({ cluster, name }, { prefix: o.prefix ?? '' }), data: JSON.parse(JSON.stringify(event)) as unknown };
}
