// `slicemesh plan`: what the EndpointSlice and mirroring controllers (plus hints) would write.

import type { ObjectChange } from '@slicemesh/core';
import { ClusterState, planCluster as planClusterOfState } from '@slicemesh/core';
import type { EndpointSlice, Endpoints, KubeObject, Node, Pod, Service } from '@slicemesh/model';
import { DEFAULT_MAX_ENDPOINTS_PER_SLICE, MANAGED_BY_CONTROLLER, MAX_MAX_ENDPOINTS_PER_SLICE, labelValueProblem } from '@slicemesh/model';
import { TopologyCache } from '@slicemesh/topology';
import { UsageError } from '../cli-error.ts';
import { inventory, sortByKey } from './objects.ts';

/**
 * `slices`: the cluster's EndpointSlices after the plan — every input slice, with the planned
 * creates, updates and deletes applied (what kube-proxy on that cluster would program from);
 * `changed`: only the slices the plan creates or updates; `changes`: the three lists.
 */
export type PlanOutput = 'slices' | 'changed' | 'changes';

export interface PlanOptions {
  readonly maxEndpointsPerSlice: number;
  readonly managedBy: string;
  readonly output: PlanOutput;
}

/** Reads the plan flags; throws UsageError for values outside their ranges. */
export function planOptions(flags: Readonly<Record<string, string | undefined>>): PlanOptions {
  const rawMax = flags['max-endpoints-per-slice'];
  let maxEndpointsPerSlice = DEFAULT_MAX_ENDPOINTS_PER_SLICE;
  if (rawMax !== undefined) {
    const n = /^[0-9]{1,7}$/.test(rawMax) ? Number(rawMax) : NaN;
    if (!(n >= 1 && n <= MAX_MAX_ENDPOINTS_PER_SLICE)) {
      throw new UsageError(`--max-endpoints-per-slice must be an integer between 1 and ${MAX_MAX_ENDPOINTS_PER_SLICE} (got ${JSON.stringify(rawMax)})`);
    }
    maxEndpointsPerSlice = n;
  }
  const managedBy = flags['managed-by'] ?? MANAGED_BY_CONTROLLER;
  const problem = managedBy === '' ? 'must not be empty' : labelValueProblem(managedBy);
  if (problem !== null) throw new UsageError(`--managed-by ${problem}`);
  const output = flags['output'] ?? 'slices';
  if (output !== 'slices' && output !== 'changed' && output !== 'changes') throw new UsageError(`--output must be slices, changed or changes (got ${JSON.stringify(output)})`);
  return { maxEndpointsPerSlice, managedBy, output };
}

/** Non-fatal findings, one line each (stderr); stdout stays pure JSON. */
export type Warn = (line: string) => void;

export interface PlanResult {
  readonly create: EndpointSlice[];
  readonly update: EndpointSlice[];
  readonly delete: EndpointSlice[];
  readonly unchanged: EndpointSlice[];
}

/**
 * The objects of a dump as the projection the live services hold. A dump lists each object
 * once; should a name repeat, the later entry wins, as a later watch event would.
 */
export function stateOf(objects: readonly KubeObject[]): ClusterState {
  const inv = inventory(objects);
  const state = new ClusterState();
  let order = 0;
  const put = (kind: ObjectChange['kind'], o: Service | Pod | Node | Endpoints): void =>
    state.restore({ kind, namespace: kind === 'Node' ? '' : (o.metadata.namespace ?? 'default'), name: o.metadata.name, resourceVersion: String(++order), deleted: false, object: o });
  for (const n of inv.nodes) put('Node', n);
  for (const s of inv.services) put('Service', s);
  for (const e of inv.endpoints) put('Endpoints', e);
  for (const p of inv.pods) put('Pod', p);
  for (const sl of inv.slices) state.putSlice(sl.metadata.namespace === undefined ? { ...sl, metadata: { ...sl.metadata, namespace: 'default' } } : sl);
  return state;
}

/**
 * Plans every Service in `objects` through the composition the slicer and the hints service
 * run (@slicemesh/core planCluster): selector Services through the EndpointSlice reconciler and
 * hints, selectorless Services with Endpoints through mirroring, slices of Services that are gone
 * deleted. Each list is sorted by namespace/name.
 */
export function planCluster(objects: readonly KubeObject[], opts: PlanOptions, warn: Warn): PlanResult {
  const cache = new TopologyCache();
  cache.setNodes(inventory(objects).nodes);
  const plan = planClusterOfState(stateOf(objects), {
    settings: { managedBy: opts.managedBy, maxEndpointsPerSlice: opts.maxEndpointsPerSlice },
    hints: { cache, preferSameTrafficDistribution: true },
  });
  for (const n of plan.notes) {
    for (const e of n.errors) warn(`Service ${n.key}: ${e}`);
    for (const ev of n.events) if (ev.type === 'Warning') warn(`Endpoints ${n.key}: ${ev.reason}: ${ev.message}`);
    for (const d of n.decisions) if (d.event?.type === 'Warning') warn(`Service ${n.key}: ${d.event.reason}: ${d.event.message}`);
  }
  return { create: sortByKey(plan.create), update: sortByKey(plan.update), delete: sortByKey(plan.delete), unchanged: sortByKey(plan.unchanged) };
}

/** The JSON printed for `--output slices` (a List) or `--output changes`. */
export function planCommand(objects: readonly KubeObject[], opts: PlanOptions, warn: Warn): unknown {
  const r = planCluster(objects, opts, warn);
  if (opts.output === 'changes') return { create: r.create, update: r.update, delete: r.delete };
  const list = (items: EndpointSlice[]) => ({ apiVersion: 'v1', kind: 'List', items: sortByKey(items), metadata: { resourceVersion: '' } });
  if (opts.output === 'changed') return list([...r.update, ...r.create]);
  return list(clusterAfter(inventory(objects).slices, r));
}

/** Every input slice with the plan applied: deletes gone, updates in place, creates added. */
export function clusterAfter(input: readonly EndpointSlice[], plan: PlanResult): EndpointSlice[] {
  const key = (s: EndpointSlice): string => `${s.metadata.namespace ?? 'default'}/${s.metadata.name}`;
  const after = new Map(input.map((s) => [key(s), s]));
  for (const s of plan.delete) after.delete(key(s));
  for (const s of [...plan.update, ...plan.create]) after.set(key(s), s);
  return [...after.values()];
}
