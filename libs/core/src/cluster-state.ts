// The in-memory projection of one cluster that a reconcile reads: Services, Pods, Endpoints and
// Nodes as the log delivered them (newest resourceVersion wins, deletes leave a tombstone so a
// late stale copy cannot resurrect an object), plus the EndpointSlices the controller wrote.
// It is an informer cache fed by the log: the live slicer, the replay and the CLI all build
// one and hand it to planService (plan-service.ts), so they read the same view the same way.
//
// Objects are never mutated; a change replaces the object, which the slicing memo relies on
// (an unchanged pod is the very same object on the next reconcile).

import type { EndpointSlice, Endpoints, Node, ObjectVersion, Pod, Service } from '@slicemesh/model';
import { LABEL_SERVICE_NAME, supersedes } from '@slicemesh/model';
import type { ListChanges } from '@slicemesh/slicing';
import { isSelectorless, selectorMatches } from '@slicemesh/slicing';
import { endpointsConcernService, nodeChangeRelevant, servicesForPodChange, servicesSelectingPods } from './affected.ts';
import { SortedByName } from './sorted-names.ts';

export type ProjectedKind = 'Service' | 'Pod' | 'Node' | 'Endpoints';

/** One object version as the log carries it. */
export interface ObjectChange extends ObjectVersion {
  readonly kind: ProjectedKind;
  /** '' for Nodes. */
  readonly namespace: string;
  readonly name: string;
  /** The object; for a delete, its final state. */
  readonly object: Service | Pod | Node | Endpoints;
}

export interface ApplyResult {
  /** False when the stored version is as new or newer (a duplicate or stale copy). */
  readonly applied: boolean;
  /** Service keys (`ns/name`, sorted) the change makes dirty (A.12, B.5); [] when not applied. */
  readonly keys: readonly string[];
}

export interface ClusterStateOptions {
  /**
   * Namespaces whose Services this projection reconciles: a node change marks only their
   * Services (another partition's owner marks its own). Defaults to every namespace.
   */
  readonly ownsNamespace?: (namespace: string) => boolean;
}

const NOT_APPLIED: ApplyResult = { applied: false, keys: [] };

const objectKey = (kind: ProjectedKind, namespace: string, name: string): string => `${kind}\u0000${namespace}\u0000${name}`;
const nsName = (namespace: string, name: string): string => `${namespace}/${name}`;

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}

export class ClusterState {
  readonly #owns: (namespace: string) => boolean;
  readonly #versions = new Map<string, ObjectVersion>();
  readonly #services = new Map<string, SortedByName<Service>>();
  readonly #endpoints = new Map<string, Endpoints>();
  readonly #pods = new Map<string, SortedByName<Pod>>();
  readonly #podNode = new Map<string, string>();
  readonly #podsByNode = new Map<string, Map<string, Pod>>();
  readonly #nodes = new Map<string, Node>();
  readonly #slices = new Map<string, Map<string, EndpointSlice>>();
  readonly #slicesByService = new Map<string, Set<string>>();
  // The pods each Service selects, built on first use and then kept up to date pod by pod (an
  // informer index): a pod change costs one selector match per such Service of its namespace,
  // not a scan of the namespace per reconcile.
  readonly #selected = new Map<string, Map<string, { readonly service: Service; readonly pods: SortedByName<Pod> }>>();

  constructor(opts: ClusterStateOptions = {}) {
    this.#owns = opts.ownsNamespace ?? (() => true);
  }

  /** The stored version of an object (live or tombstone); undefined when never seen. */
  version(kind: ProjectedKind, namespace: string, name: string): ObjectVersion | undefined {
    return this.#versions.get(objectKey(kind, namespace, name));
  }

  /** Whether apply() would take `change` (it is newer than what is stored). */
  accepts(change: ObjectChange): boolean {
    const stored = this.version(change.kind, change.namespace, change.name);
    return stored === undefined || supersedes(change, stored);
  }

  /** Applies one change and returns the Services it makes dirty. */
  apply(change: ObjectChange): ApplyResult {
    if (!this.accepts(change)) return NOT_APPLIED;
    const keys = this.#affected(change);
    this.#store(change);
    return { applied: true, keys };
  }

  /** Applies a change without working out what it affects (restoring a snapshot). */
  restore(change: ObjectChange): void {
    if (this.accepts(change)) this.#store(change);
  }

  service(namespace: string, name: string): Service | undefined {
    const list = this.#services.get(namespace)?.view();
    return list === undefined ? undefined : findByName(list, name);
  }

  /** Live Services of a namespace, sorted by name. */
  servicesIn(namespace: string): readonly Service[] {
    return this.#services.get(namespace)?.view() ?? [];
  }

  /**
   * The live pods `service` selects (A.1.1), sorted by name; [] for a Service without a
   * selector. The same array objects between changes, as the slicing memo wants.
   */
  selectedPods(service: Service): readonly Pod[] {
    if (isSelectorless(service)) return [];
    const namespace = service.metadata.namespace ?? 'default';
    const inNs = getOrAdd(this.#selected, namespace, () => new Map());
    const have = inNs.get(service.metadata.name);
    if (have !== undefined && have.service === service) return have.pods.view();
    const pods = new SortedByName<Pod>();
    const selector = service.spec.selector ?? {};
    for (const p of this.podsIn(namespace)) if (selectorMatches(selector, p.metadata.labels)) pods.put(p);
    inNs.set(service.metadata.name, { service, pods });
    return pods.view();
  }

  /** How selectedPods(service)'s list changes in place (call selectedPods first). */
  selectedPodChanges(service: Service): ListChanges | undefined {
    const have = this.#selected.get(service.metadata.namespace ?? 'default')?.get(service.metadata.name);
    return have !== undefined && have.service === service ? have.pods : undefined;
  }

  endpoints(namespace: string, name: string): Endpoints | undefined {
    return this.#endpoints.get(nsName(namespace, name));
  }

  /** Live pods of a namespace, sorted by name: the same array objects between changes. */
  podsIn(namespace: string): readonly Pod[] {
    return this.#pods.get(namespace)?.view() ?? [];
  }

  /** Every live node by name. */
  nodes(): ReadonlyMap<string, Node> {
    return this.#nodes;
  }

  /** Slices labelled with the Service's name (every manager), sorted by name. */
  slicesOf(namespace: string, service: string): EndpointSlice[] {
    const names = this.#slicesByService.get(nsName(namespace, service));
    if (names === undefined) return [];
    const inNs = this.#slices.get(namespace);
    return [...names].sort().map((n) => inNs?.get(n)).filter((s): s is EndpointSlice => s !== undefined);
  }

  /** Names of every slice of the namespace. */
  sliceNamesIn(namespace: string): readonly string[] {
    return [...(this.#slices.get(namespace)?.keys() ?? [])];
  }

  /** Stores a slice as written (replacing the one of the same namespace and name). */
  putSlice(slice: EndpointSlice): void {
    const namespace = slice.metadata.namespace ?? '';
    const name = slice.metadata.name;
    const inNs = getOrAdd(this.#slices, namespace, () => new Map<string, EndpointSlice>());
    const before = inNs.get(name);
    if (before !== undefined) this.#unindexSlice(namespace, before);
    inNs.set(name, slice);
    const svc = slice.metadata.labels?.[LABEL_SERVICE_NAME];
    if (svc !== undefined && svc !== '') getOrAdd(this.#slicesByService, nsName(namespace, svc), () => new Set()).add(name);
  }

  /** Removes a slice; returns it, or undefined when there was none. */
  removeSlice(namespace: string, name: string): EndpointSlice | undefined {
    const inNs = this.#slices.get(namespace);
    const before = inNs?.get(name);
    if (inNs === undefined || before === undefined) return undefined;
    inNs.delete(name);
    if (inNs.size === 0) this.#slices.delete(namespace);
    this.#unindexSlice(namespace, before);
    return before;
  }

  /** The stored slice of that namespace and name. */
  slice(namespace: string, name: string): EndpointSlice | undefined {
    return this.#slices.get(namespace)?.get(name);
  }

  /**
   * Every key a full resync must reconcile (`ns/name`, sorted): each live Service, each name
   * with slices and each Endpoints object, in the namespaces this projection owns.
   */
  reconcilableKeys(): string[] {
    const keys = new Set<string>();
    for (const [ns, list] of this.#services) if (this.#owns(ns)) for (const s of list.view()) keys.add(nsName(ns, s.metadata.name));
    for (const k of this.#slicesByService.keys()) if (this.#owns(k.slice(0, k.indexOf('/')))) keys.add(k);
    for (const k of this.#endpoints.keys()) if (this.#owns(k.slice(0, k.indexOf('/')))) keys.add(k);
    return [...keys].sort();
  }

  /** How much is held, for logs and metrics. */
  counts(): { readonly services: number; readonly pods: number; readonly endpoints: number; readonly nodes: number; readonly slices: number } {
    let services = 0;
    let pods = 0;
    let slices = 0;
    for (const l of this.#services.values()) services += l.size;
    for (const l of this.#pods.values()) pods += l.size;
    for (const m of this.#slices.values()) slices += m.size;
    return { services, pods, endpoints: this.#endpoints.size, nodes: this.#nodes.size, slices };
  }

  #unindexSlice(namespace: string, slice: EndpointSlice): void {
    const svc = slice.metadata.labels?.[LABEL_SERVICE_NAME];
    if (svc === undefined || svc === '') return;
    const k = nsName(namespace, svc);
    const set = this.#slicesByService.get(k);
    set?.delete(slice.metadata.name);
    if (set?.size === 0) this.#slicesByService.delete(k);
  }

  // A.12 / B.5, read against the state before the change.
  #affected(c: ObjectChange): string[] {
    const after = c.deleted ? undefined : c.object;
    switch (c.kind) {
      case 'Service':
        return [nsName(c.namespace, c.name)]; // A.12.1
      case 'Endpoints':
        return endpointsConcernService(this.service(c.namespace, c.name)) ? [nsName(c.namespace, c.name)] : [];
      case 'Pod': {
        const live = this.#pods.get(c.namespace)?.view();
        const before = live === undefined ? undefined : findByName(live, c.name);
        // A delete of a pod never seen live still names its final labels.
        const old = before ?? (after === undefined ? (c.object as Pod) : undefined);
        return servicesForPodChange(this.servicesIn(c.namespace), old, after as Pod | undefined);
      }
      case 'Node': {
        if (!nodeChangeRelevant(this.#nodes.get(c.name), after as Node | undefined)) return [];
        const byNs = new Map<string, Pod[]>();
        for (const [key, pod] of this.#podsByNode.get(c.name) ?? []) {
          const ns = key.slice(0, key.indexOf('/'));
          if (this.#owns(ns)) getOrAdd(byNs, ns, () => []).push(pod);
        }
        const keys: string[] = [];
        for (const [ns, pods] of byNs) keys.push(...servicesSelectingPods(this.servicesIn(ns), pods));
        return [...new Set(keys)].sort();
      }
      default: {
        const unknownKind: never = c.kind;
        throw new Error(`unhandled kind ${String(unknownKind)}`);
      }
    }
  }

  #store(c: ObjectChange): void {
    this.#versions.set(objectKey(c.kind, c.namespace, c.name), { resourceVersion: c.resourceVersion, deleted: c.deleted });
    switch (c.kind) {
      case 'Service': {
        this.#selected.get(c.namespace)?.delete(c.name); // rebuilt on next use
        const list = getOrAdd(this.#services, c.namespace, () => new SortedByName<Service>());
        if (c.deleted) list.remove(c.name);
        else list.put(c.object as Service);
        if (list.size === 0) this.#services.delete(c.namespace);
        return;
      }
      case 'Endpoints':
        if (c.deleted) this.#endpoints.delete(nsName(c.namespace, c.name));
        else this.#endpoints.set(nsName(c.namespace, c.name), c.object as Endpoints);
        return;
      case 'Pod':
        this.#storePod(c);
        return;
      case 'Node':
        if (c.deleted) this.#nodes.delete(c.name);
        else this.#nodes.set(c.name, c.object as Node);
        return;
      default: {
        const unknownKind: never = c.kind;
        throw new Error(`unhandled kind ${String(unknownKind)}`);
      }
    }
  }

  #storePod(c: ObjectChange): void {
    const key = nsName(c.namespace, c.name);
    const list = getOrAdd(this.#pods, c.namespace, () => new SortedByName<Pod>());
    const oldNode = this.#podNode.get(key);
    if (oldNode !== undefined) {
      const onNode = this.#podsByNode.get(oldNode);
      onNode?.delete(key);
      if (onNode?.size === 0) this.#podsByNode.delete(oldNode);
      this.#podNode.delete(key);
    }
    const selections = this.#selected.get(c.namespace);
    if (c.deleted) {
      list.remove(c.name);
      if (list.size === 0) this.#pods.delete(c.namespace);
      if (selections !== undefined) for (const sel of selections.values()) sel.pods.remove(c.name);
      return;
    }
    const pod = c.object as Pod;
    list.put(pod);
    if (selections !== undefined) {
      for (const sel of selections.values()) {
        if (selectorMatches(sel.service.spec.selector ?? {}, pod.metadata.labels)) sel.pods.put(pod);
        else sel.pods.remove(c.name);
      }
    }
    const node = pod.spec.nodeName;
    if (node !== undefined && node !== '') {
      this.#podNode.set(key, node);
      getOrAdd(this.#podsByNode, node, () => new Map<string, Pod>()).set(key, pod);
    }
  }
}

// Binary search in a name-sorted list.
function findByName<T extends { readonly metadata: { readonly name: string } }>(list: readonly T[], name: string): T | undefined {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const n = (list[mid] as T).metadata.name;
    if (n === name) return list[mid];
    if (n < name) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}
