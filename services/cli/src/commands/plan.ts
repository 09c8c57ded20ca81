// `slicemesh plan`: what the EndpointSlice and mirroring controllers (plus hints) would write.

import type { EndpointSlice, Endpoints, KubeObject, Node, Pod, Service, SlicePlan } from '@slicemesh/model';
import { DEFAULT_MAX_ENDPOINTS_PER_SLICE, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING, MAX_MAX_ENDPOINTS_PER_SLICE, labelValueProblem } from '@slicemesh/model';
import { TriggerTimeTracker, finalizePlan, isSelectorless, planSlices, reconcileMirroring, selectPods, serviceAddressTypes } from '@slicemesh/slicing';
import { TopologyCache, reconcileHints } from '@slicemesh/topology';
import { UsageError } from '../cli-error.ts';
import { inventory, keyOf, sortByKey } from './objects.ts';

export type PlanOutput = 'slices' | 'changes';

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
  if (output !== 'slices' && output !== 'changes') throw new UsageError(`--output must be slices or changes (got ${JSON.stringify(output)})`);
  return { maxEndpointsPerSlice, managedBy, output };
}

/** Non-fatal findings, one line each (stderr); stdout stays pure JSON. */
export type Warn = (line: string) => void;

const EMPTY: SlicePlan = { create: [], update: [], delete: [], unchanged: [] };

/** Groups items by a key, keeping input order within each group. */
function groupBy<T>(items: readonly T[], key: (t: T) => string | undefined): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined) continue;
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

const nsOf = (o: { readonly metadata: { readonly namespace?: string } }): string => o.metadata.namespace ?? 'default';

interface Cluster {
  readonly podsByNamespace: ReadonlyMap<string, readonly Pod[]>;
  readonly nodes: ReadonlyMap<string, Node>;
  readonly slicesByNamespace: ReadonlyMap<string, readonly EndpointSlice[]>;
  /** By `<namespace>/<kubernetes.io/service-name label>`. */
  readonly slicesByService: ReadonlyMap<string, readonly EndpointSlice[]>;
  readonly cache: TopologyCache;
}

/** A.1–A.10 and C for one Service with a selector: plan, hints per address type, finalize. */
function planService(service: Service, c: Cluster, opts: PlanOptions, warn: Warn): SlicePlan {
  const ns = nsOf(service);
  const existing = (c.slicesByService.get(keyOf(service.metadata)) ?? []).filter(
    (s) => s.metadata.labels?.[LABEL_MANAGED_BY] === opts.managedBy && s.metadata.deletionTimestamp == null,
  );
  const pods = selectPods(service, c.podsByNamespace.get(ns) ?? []);
  // One-shot run: every Service is seen for the first time, so the trigger time is its
  // creationTimestamp (A.10.1).
  const triggerTime = new TriggerTimeTracker().computeTriggerTime(service, pods);
  const result = planSlices({ service, pods, nodes: c.nodes, existingSlices: existing, maxEndpointsPerSlice: opts.maxEndpointsPerSlice, managedBy: opts.managedBy, triggerTime });
  for (const e of result.errors) warn(`Service ${keyOf(service.metadata)}: ${e}`);
  if (result.skipped) return EMPTY;
  let plan = result.plan;
  for (const addressType of serviceAddressTypes(service)) {
    const hinted = reconcileHints({ service, addressType, plan, cache: c.cache });
    plan = hinted.plan;
    const ev = hinted.decision.event;
    if (ev !== null && ev.type === 'Warning') warn(`Service ${keyOf(service.metadata)}: ${ev.reason}: ${ev.message}`);
  }
  // New names must avoid every slice of the namespace, whoever manages it.
  return finalizePlan(plan, { service, existingSlices: c.slicesByNamespace.get(ns) ?? [], triggerTime });
}

/** B for one name: the Endpoints (or null) and the same-named Service (or null). */
function planMirroring(name: string, namespace: string, endpoints: Endpoints | null, service: Service | null, c: Cluster, warn: Warn): SlicePlan {
  const existing = c.slicesByService.get(`${namespace}/${name}`) ?? [];
  const result = reconcileMirroring({ endpoints, service, existingSlices: existing });
  for (const ev of result.events) if (ev.type === 'Warning') warn(`Endpoints ${namespace}/${name}: ${ev.reason}: ${ev.message}`);
  return result.plan;
}

export interface PlanResult {
  readonly create: EndpointSlice[];
  readonly update: EndpointSlice[];
  readonly delete: EndpointSlice[];
  readonly unchanged: EndpointSlice[];
}

/**
 * Plans every Service in `objects`: selector Services through the EndpointSlice reconciler
 * and hints, selectorless Services and orphaned mirrored slices through mirroring.
 * ExternalName Services and selectorless Services without Endpoints produce nothing.
 * Each list is sorted by namespace/name.
 */
export function planCluster(objects: readonly KubeObject[], opts: PlanOptions, warn: Warn): PlanResult {
  const inv = inventory(objects);
  const cache = new TopologyCache();
  cache.setNodes(inv.nodes);
  const c: Cluster = {
    podsByNamespace: groupBy(inv.pods, nsOf),
    nodes: new Map(inv.nodes.map((n) => [n.metadata.name, n])),
    slicesByNamespace: groupBy(inv.slices, nsOf),
    slicesByService: groupBy(inv.slices, (s) => {
      const svc = s.metadata.labels?.[LABEL_SERVICE_NAME];
      return svc ? `${nsOf(s)}/${svc}` : undefined;
    }),
    cache,
  };
  const services = new Map(inv.services.map((s) => [keyOf(s.metadata), s]));
  const endpoints = new Map(inv.endpoints.map((e) => [keyOf(e.metadata), e]));
  const plans: SlicePlan[] = [];

  for (const service of sortByKey(inv.services)) {
    if (service.spec.type === 'ExternalName') continue;
    if (!isSelectorless(service)) plans.push(planService(service, c, opts, warn));
  }
  // Mirroring: every name that has an Endpoints object or mirrored slices (B.1: without a
  // selectorless Service of the same name, its mirrored slices are deleted).
  const mirrorKeys = new Set(endpoints.keys());
  for (const [key, slices] of c.slicesByService) {
    if (slices.some((s) => s.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY_MIRRORING)) mirrorKeys.add(key);
  }
  for (const key of [...mirrorKeys].sort()) {
    const [namespace = 'default', name = ''] = key.split('/');
    plans.push(planMirroring(name, namespace, endpoints.get(key) ?? null, services.get(key) ?? null, c, warn));
  }

  const all = (pick: (p: SlicePlan) => readonly EndpointSlice[]): EndpointSlice[] => sortByKey(plans.flatMap(pick));
  return { create: all((p) => p.create), update: all((p) => p.update), delete: all((p) => p.delete), unchanged: all((p) => p.unchanged) };
}

/** The JSON printed for `--output slices` (a List) or `--output changes`. */
export function planCommand(objects: readonly KubeObject[], opts: PlanOptions, warn: Warn): unknown {
  const r = planCluster(objects, opts, warn);
  if (opts.output === 'changes') return { create: r.create, update: r.update, delete: r.delete };
  return { apiVersion: 'v1', kind: 'List', items: sortByKey([...r.unchanged, ...r.update, ...r.create]), metadata: { resourceVersion: '' } };
}
