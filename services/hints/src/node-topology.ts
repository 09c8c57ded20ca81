// Node changes: the current node list, and which services a change must requeue.
//
// Two things depend on nodes. Hints depend on the zone CPU distribution (C.1), and upstream
// requeues only the services whose cached hints became overloaded (A.12.5, C.4). Zone views
// depend on which node is in which zone: a node joining, leaving or changing zone can change
// what every service's views must hold (Local policies, node hints), so then every service is
// requeued. That second rule is ours (upstream has no views); as a side effect a service whose
// hints were refused for lack of node information is re-evaluated when the node set changes,
// instead of at its next own event.

import type { Node, ObjectVersion } from '@slicemesh/model';
import { supersedes } from '@slicemesh/model';
import { isNewerResourceVersion } from '@slicemesh/db';
import { viewZoneOf } from '@slicemesh/proxy-state';
import type { CpuDistribution, OverloadedService, TopologyCache } from '@slicemesh/topology';
import type { KubeEnvelope } from './messages.ts';

/**
 * true when `incoming` is older than `stored`. Only integer versions are ordered; anything else
 * (including a missing version) is accepted, as the stream order is all we know then.
 */
export function isStaleVersion(incoming: string | undefined, stored: string | undefined): boolean {
  if (incoming === undefined || stored === undefined || incoming === '' || stored === '') return false;
  if (!/^[0-9]+$/.test(incoming) || !/^[0-9]+$/.test(stored)) return false;
  return isNewerResourceVersion(stored, incoming);
}

/**
 * The newest version taken per object of one KUBE consumer, deletes included (tombstones): the
 * order the slicer's ClusterState applies (`supersedes`: a newer resourceVersion, or a delete at
 * the live version), so a copy that a second watcher replica published late is refused even
 * when the object is gone and nothing is held to compare it with. Memory only: after a restart
 * the live objects are compared through what the projection holds, the tombstones start empty.
 */
export class VersionFloors {
  readonly #taken = new Map<string, ObjectVersion>();

  /** The newest version taken for `key`; undefined when none. */
  get(key: string): ObjectVersion | undefined {
    return this.#taken.get(key);
  }

  /** One batch's view: take() checks against the batch so far, apply() keeps it once committed. */
  stage(): { take(key: string, version: ObjectVersion): boolean; apply(): void } {
    const batch = new Map<string, ObjectVersion>();
    return {
      take: (key, version) => {
        const floor = batch.get(key) ?? this.#taken.get(key);
        if (floor !== undefined && !supersedes(version, floor)) return false;
        batch.set(key, version);
        return true;
      },
      apply: () => {
        for (const [k, v] of batch) this.#taken.set(k, v);
        batch.clear();
      },
    };
  }
}

/** The nodes of one cluster, by name, with the same stale-version guard as the stored copy. */
export class NodeSet {
  readonly #nodes = new Map<string, Node>();
  /** list() until the next change: callers compare node lists by identity. */
  #sorted: Node[] | null = null;

  constructor(initial: readonly Node[] = []) {
    for (const n of initial) this.#nodes.set(n.metadata.name, n);
  }

  get(name: string): Node | undefined {
    return this.#nodes.get(name);
  }

  /** Whether `env` is older than the node held (then applying it changes nothing). */
  isStale(env: KubeEnvelope<Node>, held: Node | undefined = this.#nodes.get(env.object.metadata.name)): boolean {
    return held !== undefined && isStaleVersion(env.object.metadata.resourceVersion, held.metadata.resourceVersion);
  }

  /** Applies an upsert or delete; returns false when it was stale (nothing changed). */
  apply(env: KubeEnvelope<Node>): boolean {
    if (this.isStale(env)) return false;
    const name = env.object.metadata.name;
    if (env.type === 'Deleted.v1') this.#nodes.delete(name);
    else this.#nodes.set(name, env.object);
    this.#sorted = null;
    return true;
  }

  /** Every node, sorted by name ([] when none); the same array until a node changes. */
  list(): readonly Node[] {
    this.#sorted ??= [...this.#nodes.keys()].sort().map((n) => this.#nodes.get(n) as Node);
    return this.#sorted;
  }
}

/**
 * A value that changes exactly when some node's view zone changes or a node comes or goes:
 * sorted `name=zone` pairs (UNZONED_VIEW for nodes without a usable zone label). '' for no nodes.
 */
export function zoneLayoutOf(nodes: readonly Node[]): string {
  return nodes
    .map((n) => JSON.stringify([n.metadata.name, viewZoneOf(n)]))
    .sort()
    .join(',');
}

export interface NodeChangeOutcome {
  readonly distribution: CpuDistribution;
  readonly zoneLayout: string;
  /** The node/zone layout changed: every service's views must be recomputed. */
  readonly requeueAll: boolean;
  /** C.4: services whose cached hints are now overloaded, with the reason. */
  readonly overloaded: readonly OverloadedService[];
}

/**
 * Feeds the full node list to the cache (C.1) and says what to requeue. The cache is updated in
 * place; `previousLayout` is the zoneLayoutOf() of the node list before the change.
 */
export function applyNodeChange(cache: TopologyCache, nodes: readonly Node[], previousLayout: string): NodeChangeOutcome {
  const distribution = cache.setNodes(nodes);
  const zoneLayout = zoneLayoutOf(nodes);
  return { distribution, zoneLayout, requeueAll: zoneLayout !== previousLayout, overloaded: cache.overloadedServicesWithReasons() };
}
