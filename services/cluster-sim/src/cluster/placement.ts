// Choosing a node for a pod: the nodes it may run on (ready, schedulable, taints tolerated,
// nodeSelector and required node affinity met, enough unrequested CPU), then the spread
// rule: fewest pods of the same owner in the zone, then on the node, then fewest pods
// overall, ties broken round-robin from a cursor.
import { LABEL_ZONE } from '@slicemesh/model';
import type { KubeObj } from '../store/types.ts';
import { isNodeReady, nodeCpuMillis, podCpuMillis, specOf } from './pod-status.ts';

type Json = Record<string, unknown>;

export interface PlacementCounts {
  /** CPU requested by non-terminal pods on the node, in millicores. */
  cpuUsed(node: string): number;
  /** Pods of `owner` on the node (not terminating). */
  ownerPods(node: string, owner: string): number;
  /** All pods on the node. */
  totalPods(node: string): number;
}

function tolerates(pod: KubeObj, taint: Json): boolean {
  const effect = taint['effect'];
  if (effect !== 'NoSchedule' && effect !== 'NoExecute') return true;
  const tolerations = (specOf(pod)['tolerations'] as Json[] | undefined) ?? [];
  return tolerations.some((t) => {
    if (t['effect'] !== undefined && t['effect'] !== '' && t['effect'] !== effect) return false;
    if (t['operator'] === 'Exists') return t['key'] === undefined || t['key'] === '' || t['key'] === taint['key'];
    return t['key'] === taint['key'] && (t['value'] ?? '') === (taint['value'] ?? '');
  });
}

function expressionMatches(labels: Readonly<Record<string, string>>, e: Json): boolean {
  const value = labels[e['key'] as string];
  const values = (e['values'] as string[] | undefined) ?? [];
  switch (e['operator']) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': return value !== undefined && Number(value) > Number(values[0]);
    case 'Lt': return value !== undefined && Number(value) < Number(values[0]);
    default: return false;
  }
}

/** What placement needs of a node, computed once per stored node object. */
interface NodeFacts {
  readonly ready: boolean;
  readonly unschedulable: boolean;
  readonly hardTaints: readonly Json[];
  readonly labels: Readonly<Record<string, string>>;
  readonly zone: string;
  readonly cpuMillis: number;
}

const factsCache = new WeakMap<KubeObj, NodeFacts>();

function factsOf(node: KubeObj): NodeFacts {
  let facts = factsCache.get(node);
  if (!facts) {
    const labels = node.metadata.labels ?? {};
    facts = {
      ready: isNodeReady(node),
      unschedulable: specOf(node)['unschedulable'] === true,
      hardTaints: ((specOf(node)['taints'] as Json[] | undefined) ?? []).filter((t) => t['effect'] === 'NoSchedule' || t['effect'] === 'NoExecute'),
      labels,
      zone: labels[LABEL_ZONE] ?? '',
      cpuMillis: nodeCpuMillis(node),
    };
    factsCache.set(node, facts);
  }
  return facts;
}

function nodeTerms(pod: KubeObj): Json[] {
  return ((((specOf(pod)['affinity'] as Json | undefined)?.['nodeAffinity'] as Json | undefined)
    ?.['requiredDuringSchedulingIgnoredDuringExecution'] as Json | undefined)?.['nodeSelectorTerms'] as Json[] | undefined) ?? [];
}

function admits(facts: NodeFacts, pod: KubeObj, selector: Readonly<Record<string, string>>, terms: readonly Json[]): boolean {
  if (!facts.ready || facts.unschedulable) return false;
  if (!facts.hardTaints.every((t) => tolerates(pod, t))) return false;
  for (const k in selector) if (facts.labels[k] !== selector[k]) return false;
  if (terms.length === 0) return true;
  return terms.some((term) => ((term['matchExpressions'] as Json[] | undefined) ?? []).every((e) => expressionMatches(facts.labels, e)));
}

/** Whether `pod` may run on `node` ignoring resources (readiness, taints, selectors, affinity). */
export function nodeAdmits(node: KubeObj, pod: KubeObj): boolean {
  const selector = (specOf(pod)['nodeSelector'] as Record<string, string> | undefined) ?? {};
  return admits(factsOf(node), pod, selector, nodeTerms(pod));
}

/** The owner a pod spreads with: its controller reference, or the pod itself. */
export function ownerKeyOf(pod: KubeObj): string {
  const refs = pod.metadata.ownerReferences ?? [];
  const owner = refs.find((r) => r.controller) ?? refs[0];
  return `${pod.metadata.namespace ?? ''}/${owner ? owner.name : `pod:${pod.metadata.name}`}`;
}

export interface Choice {
  readonly node: KubeObj;
  /** The cursor to pass next time (round-robin among ties). */
  readonly cursor: number;
}

/** The node for `pod` among `nodes` (in a stable order), or undefined when none fits. */
export function chooseNode(pod: KubeObj, nodes: readonly KubeObj[], counts: PlacementCounts, cursor: number): Choice | undefined {
  const owner = ownerKeyOf(pod);
  const need = podCpuMillis(pod);
  const selector = (specOf(pod)['nodeSelector'] as Record<string, string> | undefined) ?? {};
  const terms = nodeTerms(pod);
  const fits: { node: KubeObj; i: number; zone: string; owned: number; total: number }[] = [];
  const zoneOwned = new Map<string, number>();
  nodes.forEach((node, i) => {
    const facts = factsOf(node);
    const name = node.metadata.name;
    if (!admits(facts, pod, selector, terms) || facts.cpuMillis - counts.cpuUsed(name) < need) return;
    const owned = counts.ownerPods(name, owner);
    fits.push({ node, i, zone: facts.zone, owned, total: counts.totalPods(name) });
    zoneOwned.set(facts.zone, (zoneOwned.get(facts.zone) ?? 0) + owned);
  });
  if (fits.length === 0) return undefined;
  const n = nodes.length;
  const start = cursor % n;
  let best = fits[0]!;
  const key = (f: typeof best): readonly number[] => [zoneOwned.get(f.zone)!, f.owned, f.total, (f.i - start + n) % n];
  let bestKey = key(best);
  for (let k = 1; k < fits.length; k++) {
    const f = fits[k]!;
    const fk = key(f);
    const d = fk.findIndex((v, j) => v !== bestKey[j]);
    if (d >= 0 && fk[d]! < bestKey[d]!) {
      best = f;
      bestKey = fk;
    }
  }
  return { node: best.node, cursor: best.i + 1 };
}
