// The hints service's consumers of KUBE as other services must know them: the slicer's
// compactor keeps the log for what they still have to read. Each partition has one consumer per
// role, reading one filter, and records its position in consumer_offsets under a name that says
// its cluster, stream, partition and role.

import type { SubjectOptions } from './subjects.ts';
import { KIND_TOKENS, kubeNodesFilter, kubePartitionFilter } from './subjects.ts';

/** The hints service's consumers of KUBE (its fourth role, `slices`, reads SLICES). */
export type HintsKubeRole = 'nodes' | 'services' | 'endpointslices';

const KUBE_ROLES: ReadonlySet<string> = new Set<HintsKubeRole>(['nodes', 'services', 'endpointslices']);

/** Whether `role` is one of the hints service's KUBE consumers. */
export function isHintsKubeRole(role: string): role is HintsKubeRole {
  return KUBE_ROLES.has(role);
}

/**
 * What a hints KUBE consumer of `partition` reads: every node (each partition's owner must see
 * every node), or the partition's Services, or its other controllers' EndpointSlices.
 */
export function hintsKubeFilter(role: HintsKubeRole, cluster: string, partition: number, opts?: SubjectOptions): string {
  if (role === 'nodes') return kubeNodesFilter(cluster, opts);
  const kind = role === 'services' ? KIND_TOKENS.Service : KIND_TOKENS.EndpointSlice;
  return `${kubePartitionFilter(cluster, partition, opts).slice(0, -1)}${kind}.>`;
}

/** The consumer_offsets name of a hints consumer: `hints:<cluster>:<stream>:p<N>:<role>`. */
export function hintsOffsetName(cluster: string, stream: string, partition: number, role: string): string {
  return `hints:${cluster}:${stream}:p${partition}:${role}`;
}

/** The parts of a hintsOffsetName (a cluster name may hold colons); undefined for any other name. */
export function parseHintsOffsetName(name: string): { readonly cluster: string; readonly stream: string; readonly partition: number; readonly role: string } | undefined {
  const m = /^hints:(.*):([^:]+):p(\d+):([a-z]+)$/.exec(name);
  if (m === null) return undefined;
  return { cluster: m[1] ?? '', stream: m[2] ?? '', partition: Number(m[3]), role: m[4] ?? '' };
}
