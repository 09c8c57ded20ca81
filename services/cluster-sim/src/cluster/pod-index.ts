// An in-memory view of all pods, kept current from store events: by node, by owner and by
// label, so controllers answer "pods of this service" or "pods on this node" without
// scanning the whole store. Listeners run after the index has applied each event.
import type { ObjectStore } from '../store/object-store.ts';
import { keyOf } from '../store/types.ts';
import type { KubeObj, StoreEvent } from '../store/types.ts';
import { isTerminal, isTerminating, nodeNameOf, podCpuMillis } from './pod-status.ts';
import { ownerKeyOf } from './placement.ts';
import type { PlacementCounts } from './placement.ts';

function addTo(map: Map<string, Set<string>>, k: string, v: string): void {
  let set = map.get(k);
  if (!set) map.set(k, (set = new Set()));
  set.add(v);
}

function removeFrom(map: Map<string, Set<string>>, k: string, v: string): void {
  const set = map.get(k);
  if (!set) return;
  set.delete(v);
  if (set.size === 0) map.delete(k);
}

export class PodIndex implements PlacementCounts {
  readonly #pods = new Map<string, KubeObj>();
  readonly #byNode = new Map<string, Set<string>>();
  readonly #byOwner = new Map<string, Set<string>>();
  // `<namespace>\u0000<label>=<value>` -> pod keys
  readonly #byLabel = new Map<string, Set<string>>();
  // node -> owner -> non-terminating pods; node -> CPU requested by non-terminal pods
  readonly #ownerOnNode = new Map<string, Map<string, number>>();
  readonly #cpuOnNode = new Map<string, number>();
  readonly #listeners: ((event: StoreEvent) => void)[] = [];
  readonly #unwatch: () => void;

  constructor(store: ObjectStore) {
    for (const pod of store.list('Pod')) this.#add(pod);
    this.#unwatch = store.watch('Pod', { onEvent: (e) => this.#apply(e) });
  }

  /** Called with every pod event after the index reflects it. */
  subscribe(listener: (event: StoreEvent) => void): void {
    this.#listeners.push(listener);
  }

  stop(): void {
    this.#unwatch();
  }

  get(key: string): KubeObj | undefined {
    return this.#pods.get(key);
  }

  get size(): number {
    return this.#pods.size;
  }

  all(): IterableIterator<KubeObj> {
    return this.#pods.values();
  }

  onNode(node: string): KubeObj[] {
    return [...(this.#byNode.get(node) ?? [])].map((k) => this.#pods.get(k)!);
  }

  ofOwner(ownerKey: string): KubeObj[] {
    return [...(this.#byOwner.get(ownerKey) ?? [])].map((k) => this.#pods.get(k)!);
  }

  /** Pods in `namespace` whose labels include every pair of `selector` (none for an empty selector). */
  matching(namespace: string, selector: Readonly<Record<string, string>>): KubeObj[] {
    const pairs = Object.entries(selector);
    if (pairs.length === 0) return [];
    let smallest: Set<string> | undefined;
    for (const [k, v] of pairs) {
      const set = this.#byLabel.get(`${namespace}\u0000${k}=${v}`);
      if (!set) return [];
      if (!smallest || set.size < smallest.size) smallest = set;
    }
    const out: KubeObj[] = [];
    for (const key of smallest!) {
      const pod = this.#pods.get(key)!;
      const labels = pod.metadata.labels ?? {};
      if (pairs.every(([k, v]) => labels[k] === v)) out.push(pod);
    }
    return out;
  }

  cpuUsed(node: string): number {
    return this.#cpuOnNode.get(node) ?? 0;
  }

  ownerPods(node: string, owner: string): number {
    return this.#ownerOnNode.get(node)?.get(owner) ?? 0;
  }

  totalPods(node: string): number {
    return this.#byNode.get(node)?.size ?? 0;
  }

  #apply(event: StoreEvent): void {
    const prev = this.#pods.get(keyOf(event.object));
    if (prev) this.#remove(prev);
    if (event.type !== 'DELETED') this.#add(event.object);
    for (const l of this.#listeners) l(event);
  }

  #add(pod: KubeObj): void {
    const key = keyOf(pod);
    this.#pods.set(key, pod);
    const node = nodeNameOf(pod);
    if (node) {
      addTo(this.#byNode, node, key);
      this.#count(pod, node, 1);
    }
    addTo(this.#byOwner, ownerKeyOf(pod), key);
    for (const [k, v] of Object.entries(pod.metadata.labels ?? {})) addTo(this.#byLabel, `${pod.metadata.namespace}\u0000${k}=${v}`, key);
  }

  #remove(pod: KubeObj): void {
    const key = keyOf(pod);
    this.#pods.delete(key);
    const node = nodeNameOf(pod);
    if (node) {
      removeFrom(this.#byNode, node, key);
      this.#count(pod, node, -1);
    }
    removeFrom(this.#byOwner, ownerKeyOf(pod), key);
    for (const [k, v] of Object.entries(pod.metadata.labels ?? {})) removeFrom(this.#byLabel, `${pod.metadata.namespace}\u0000${k}=${v}`, key);
  }

  #count(pod: KubeObj, node: string, sign: 1 | -1): void {
    if (!isTerminal(pod)) this.#cpuOnNode.set(node, (this.#cpuOnNode.get(node) ?? 0) + sign * podCpuMillis(pod));
    if (isTerminating(pod)) return;
    let owners = this.#ownerOnNode.get(node);
    if (!owners) this.#ownerOnNode.set(node, (owners = new Map()));
    const owner = ownerKeyOf(pod);
    const n = (owners.get(owner) ?? 0) + sign;
    if (n === 0) owners.delete(owner);
    else owners.set(owner, n);
  }
}
