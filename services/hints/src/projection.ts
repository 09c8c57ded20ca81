// The hints service's state in memory: Services, slices per service (the slicer's, and apart from
// them other controllers' from KUBE), nodes, decisions and the consumers' applied offsets, loaded from Postgres at start and then fed by the consumers.
// Reconciles read it synchronously; nothing re-reads Postgres.
//
// A batch of consumed messages is first staged (checked against the state plus what the batch
// already staged), then its final rows are committed to Postgres with the offset, and only then
// applied here (`IngestStage.apply`). A failed commit leaves memory as it was, so consuming
// restarts from the offset held here, which always equals the stored one.
//
// Other controllers' slices are held only while kube-proxy would program them
// (proxyIgnoresSlice): one it ignores is staged as absent, so its rows and memory hold nothing
// for it, and the next version that qualifies (every KUBE message carries the whole object)
// brings it back.

import type { HintDecision, HintsIngestRows, HintsSnapshot, NamespacedName } from '@slicemesh/db';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';
import { proxyIgnoresSlice } from '@slicemesh/proxy-state';
import type { KubeEnvelope, SliceChangedV1 } from './messages.ts';
import { NodeSet, isStaleVersion } from './node-topology.ts';
import type { ServiceStateReader } from './ports.ts';
import type { ServiceKey } from './published-index.ts';
import { serviceKeyOf } from './published-index.ts';

/** The service a slice belongs to, as the stored row says it: namespace and service-name label. */
function ownerOf(slice: EndpointSlice): ServiceKey {
  return serviceKeyOf(slice.metadata.namespace ?? '', slice.metadata.labels?.[LABEL_SERVICE_NAME] ?? '');
}

const sliceId = (namespace: string, name: string): string => `${namespace}/${name}`;

export class HintsProjection implements ServiceStateReader {
  readonly nodes: NodeSet;
  readonly #services = new Map<ServiceKey, Service>();
  readonly #slices = new Map<ServiceKey, Map<string, EndpointSlice>>();
  /** slices() until the service's next slice change, so unchanged input keeps its identity. */
  readonly #sorted = new Map<ServiceKey, readonly EndpointSlice[]>();
  /** `<namespace>/<slice name>` -> the service holding it (deletes name only the slice). */
  readonly #sliceOwner = new Map<string, ServiceKey>();
  readonly #decisions = new Map<ServiceKey, readonly HintDecision[]>();
  readonly #offsets = new Map<string, number>();
  /** Other controllers' slices, indexed as ours are. */
  readonly #foreign = new SliceIndex();

  constructor(snapshot?: HintsSnapshot) {
    this.nodes = new NodeSet(snapshot?.nodes ?? []);
    for (const s of snapshot?.services ?? []) this.#services.set(serviceKeyOf(s.metadata.namespace ?? '', s.metadata.name), s);
    for (const s of snapshot?.slices ?? []) this.#putSlice(s);
    for (const s of snapshot?.foreignSlices ?? []) this.#foreign.put(s);
    for (const d of snapshot?.decisions ?? []) {
      const key = serviceKeyOf(d.namespace, d.service);
      this.#decisions.set(key, [...(this.#decisions.get(key) ?? []), d]);
    }
    for (const [consumer, seq] of snapshot?.offsets ?? []) this.#offsets.set(consumer, seq);
  }

  service(key: ServiceKey): Service | undefined {
    return this.#services.get(key);
  }

  slices(key: ServiceKey): readonly EndpointSlice[] {
    let sorted = this.#sorted.get(key);
    if (sorted === undefined) {
      const byName = this.#slices.get(key);
      sorted = byName === undefined ? [] : [...byName.keys()].sort().map((n) => byName.get(n) as EndpointSlice);
      this.#sorted.set(key, sorted);
    }
    return sorted;
  }

  /** Other controllers' slices of the service (those kube-proxy programs), sorted by name; [] when none. */
  foreignSlices(key: ServiceKey): readonly EndpointSlice[] {
    return this.#foreign.slices(key);
  }

  /** The foreign slice held as `<namespace>/<name>`, if any. */
  foreignSlice(namespace: string, name: string): EndpointSlice | undefined {
    return this.#foreign.get(sliceId(namespace, name));
  }

  decisions(key: ServiceKey): readonly HintDecision[] {
    return this.#decisions.get(key) ?? [];
  }

  /** Called once the decisions are stored. */
  setDecisions(key: ServiceKey, decisions: readonly HintDecision[]): void {
    if (decisions.length === 0) this.#decisions.delete(key);
    else this.#decisions.set(key, [...decisions].sort((a, b) => (a.addressType < b.addressType ? -1 : a.addressType > b.addressType ? 1 : 0)));
  }

  /** The last sequence of `consumer` applied here (and stored); 0 when none. */
  offset(consumer: string): number {
    return this.#offsets.get(consumer) ?? 0;
  }

  /** Every service with a Service, a slice or a decision, sorted. */
  knownServices(): ServiceKey[] {
    return [...new Set([...this.#services.keys(), ...this.#slices.keys(), ...this.#foreign.services(), ...this.#decisions.keys()])].sort();
  }

  /** A fresh stage for one batch of messages. */
  stage(): IngestStage {
    return new IngestStage(this);
  }

  /** @internal */
  putSlice(namespace: string, name: string, slice: EndpointSlice | null): void {
    const id = sliceId(namespace, name);
    const owner = this.#sliceOwner.get(id);
    if (owner !== undefined) {
      const byName = this.#slices.get(owner);
      byName?.delete(name);
      if (byName?.size === 0) this.#slices.delete(owner);
      this.#sorted.delete(owner);
      this.#sliceOwner.delete(id);
    }
    if (slice !== null) this.#putSlice(slice);
  }

  /** @internal */
  putForeignSlice(namespace: string, name: string, slice: EndpointSlice | null): void {
    this.#foreign.remove(sliceId(namespace, name));
    if (slice !== null) this.#foreign.put(slice);
  }

  /** @internal */
  putService(key: ServiceKey, service: Service | null): void {
    if (service === null) this.#services.delete(key);
    else this.#services.set(key, service);
  }

  /** @internal */
  advance(consumer: string, seq: number): void {
    if (seq > this.offset(consumer)) this.#offsets.set(consumer, seq);
  }

  #putSlice(slice: EndpointSlice): void {
    const owner = ownerOf(slice);
    let byName = this.#slices.get(owner);
    if (byName === undefined) this.#slices.set(owner, (byName = new Map()));
    byName.set(slice.metadata.name, slice);
    this.#sorted.delete(owner);
    this.#sliceOwner.set(sliceId(slice.metadata.namespace ?? '', slice.metadata.name), owner);
  }
}

/** Slices by service (sorted lazily, kept until the service's next change) and by `<ns>/<name>`. */
class SliceIndex {
  readonly #byService = new Map<ServiceKey, Map<string, EndpointSlice>>();
  readonly #sorted = new Map<ServiceKey, readonly EndpointSlice[]>();
  readonly #byId = new Map<string, EndpointSlice>();

  get(id: string): EndpointSlice | undefined {
    return this.#byId.get(id);
  }

  services(): IterableIterator<ServiceKey> {
    return this.#byService.keys();
  }

  slices(key: ServiceKey): readonly EndpointSlice[] {
    let sorted = this.#sorted.get(key);
    if (sorted === undefined) {
      const byName = this.#byService.get(key);
      sorted = byName === undefined ? [] : [...byName.keys()].sort().map((n) => byName.get(n) as EndpointSlice);
      this.#sorted.set(key, sorted);
    }
    return sorted;
  }

  put(slice: EndpointSlice): void {
    const id = sliceId(slice.metadata.namespace ?? '', slice.metadata.name);
    this.remove(id);
    const owner = ownerOf(slice);
    let byName = this.#byService.get(owner);
    if (byName === undefined) this.#byService.set(owner, (byName = new Map()));
    byName.set(slice.metadata.name, slice);
    this.#sorted.delete(owner);
    this.#byId.set(id, slice);
  }

  remove(id: string): void {
    const held = this.#byId.get(id);
    if (held === undefined) return;
    const owner = ownerOf(held);
    const byName = this.#byService.get(owner);
    byName?.delete(held.metadata.name);
    if (byName?.size === 0) this.#byService.delete(owner);
    this.#sorted.delete(owner);
    this.#byId.delete(id);
  }
}

interface StagedSlice {
  readonly namespace: string;
  readonly name: string;
  readonly slice: EndpointSlice | null;
}

/**
 * One batch's changes, checked against the projection as the batch goes (stale versions
 * skipped, later messages seeing earlier ones), applied to it only by `apply`.
 */
export class IngestStage {
  private readonly projection: HintsProjection;
  readonly #slices = new Map<string, StagedSlice>();
  readonly #foreign = new Map<string, StagedSlice>();
  /** Services that held a foreign slice the batch moved to another service (its service-name label changed). */
  readonly #vacated = new Set<ServiceKey>();
  readonly #nodes = new Map<string, Node | null>();
  /** The resourceVersion of each node delete staged (the stored row is shared and version-guarded). */
  readonly #nodeDeletedAt = new Map<string, string>();
  readonly #nodeEvents: KubeEnvelope<Node>[] = [];
  readonly #services = new Map<ServiceKey, { readonly id: NamespacedName; readonly service: Service | null }>();

  constructor(projection: HintsProjection) {
    this.projection = projection;
  }

  applySliceChanged(msg: SliceChangedV1): void {
    // Deletes first: a name both deleted and upserted in one event ends up upserted.
    for (const name of msg.deletes) this.#slices.set(sliceId(msg.namespace, name), { namespace: msg.namespace, name, slice: null });
    for (const s of msg.upserts) {
      const namespace = s.metadata.namespace ?? '';
      this.#slices.set(sliceId(namespace, s.metadata.name), { namespace, name: s.metadata.name, slice: s });
    }
  }

  /**
   * Stages another controller's slice; false when its version is older than the one held. A
   * delete, or a version kube-proxy would not program (proxyIgnoresSlice), is staged as absent.
   */
  applyForeignSlice(env: KubeEnvelope<EndpointSlice>): boolean {
    const { namespace = '', name } = env.object.metadata;
    const id = sliceId(namespace, name);
    const held = this.#foreign.has(id) ? (this.#foreign.get(id)?.slice ?? undefined) : this.projection.foreignSlice(namespace, name);
    if (held !== undefined && isStaleVersion(env.object.metadata.resourceVersion, held.metadata.resourceVersion)) return false;
    const slice = env.type === 'Deleted.v1' || proxyIgnoresSlice(env.object) !== null ? null : env.object;
    if (held !== undefined && (slice === null || ownerOf(held) !== ownerOf(slice))) this.#vacated.add(ownerOf(held));
    this.#foreign.set(id, { namespace, name, slice });
    return true;
  }

  /** Services that lost a foreign slice in this batch (besides the ones the messages name). */
  vacated(): readonly ServiceKey[] {
    return [...this.#vacated].sort();
  }

  /** Stages the node change; false when its version is older than the node held. */
  applyNode(env: KubeEnvelope<Node>): boolean {
    const name = env.object.metadata.name;
    const held = this.#nodes.has(name) ? (this.#nodes.get(name) ?? undefined) : this.projection.nodes.get(name);
    if (this.projection.nodes.isStale(env, held)) return false;
    this.#nodes.set(name, env.type === 'Deleted.v1' ? null : env.object);
    const rv = env.object.metadata.resourceVersion;
    if (env.type === 'Deleted.v1' && rv !== undefined && rv !== '') this.#nodeDeletedAt.set(name, rv);
    else this.#nodeDeletedAt.delete(name);
    this.#nodeEvents.push(env);
    return true;
  }

  /** Stages the service change; false when its version is older than the Service held. */
  applyService(env: KubeEnvelope<Service>): boolean {
    const { namespace = '', name } = env.object.metadata;
    const key = serviceKeyOf(namespace, name);
    const held = this.#services.has(key) ? (this.#services.get(key)?.service ?? undefined) : this.projection.service(key);
    if (held !== undefined && isStaleVersion(env.object.metadata.resourceVersion, held.metadata.resourceVersion)) return false;
    this.#services.set(key, { id: { namespace, name }, service: env.type === 'Deleted.v1' ? null : env.object });
    return true;
  }

  /** The final state of every row the batch touched. */
  rows(): HintsIngestRows {
    const staged = [...this.#slices.values()];
    const foreign = [...this.#foreign.values()];
    const nodes = [...this.#nodes];
    const services = [...this.#services.values()];
    return {
      ...(staged.length > 0
        ? { slices: { upserts: staged.flatMap((s) => (s.slice === null ? [] : [s.slice])), deletes: staged.filter((s) => s.slice === null).map((s) => ({ namespace: s.namespace, name: s.name })) } }
        : {}),
      ...(foreign.length > 0
        ? { foreignSlices: { upserts: foreign.flatMap((s) => (s.slice === null ? [] : [s.slice])), deletes: foreign.filter((s) => s.slice === null).map((s) => ({ namespace: s.namespace, name: s.name })) } }
        : {}),
      ...(nodes.length > 0
        ? {
          nodes: {
            upserts: nodes.flatMap(([, n]) => (n === null ? [] : [n])),
            deletes: nodes.filter(([, n]) => n === null).map(([name]) => name),
            ...(this.#nodeDeletedAt.size > 0 ? { deletedAt: Object.fromEntries(this.#nodeDeletedAt) } : {}),
          },
        }
        : {}),
      ...(services.length > 0
        ? { services: { upserts: services.flatMap((s) => (s.service === null ? [] : [s.service])), deletes: services.filter((s) => s.service === null).map((s) => s.id) } }
        : {}),
    };
  }

  /** Applies the batch to the projection, up to `seq` of `consumer`; call once its rows are stored. */
  apply(consumer: string, seq: number): void {
    for (const s of this.#slices.values()) this.projection.putSlice(s.namespace, s.name, s.slice);
    for (const s of this.#foreign.values()) this.projection.putForeignSlice(s.namespace, s.name, s.slice);
    for (const env of this.#nodeEvents) this.projection.nodes.apply(env);
    for (const [key, s] of this.#services) this.projection.putService(key, s.service);
    this.projection.advance(consumer, seq);
  }
}
