// Field readers shared by the scenario sections: durations, CPU, names, object references
// and node groups.
import { nameProblem } from '../store/validation.ts';
import { parseCpu, parseDuration } from './quantities.ts';
import type { Reader } from './reader.ts';
import type { NodeGroup, ObjectRef } from './schema.ts';

export function duration(r: Reader, v: unknown, path: string): number {
  const ms = parseDuration(v);
  if (ms === undefined) r.fail(path, `must be a duration like 5s, 250ms or 1m30s, got ${JSON.stringify(v)}`);
  return ms;
}

export function cpu(r: Reader, v: unknown, path: string, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  const m = parseCpu(v);
  if (m === undefined) r.fail(path, `must be a CPU quantity like 4, 0.5 or 3500m, got ${JSON.stringify(v)}`);
  return m;
}

export function dnsName(r: Reader, v: unknown, path: string, rule: 'subdomain' | 'label' | 'dns1035' = 'subdomain'): string {
  const s = r.string(v, path);
  const problem = nameProblem(s, rule);
  if (problem) r.fail(path, problem);
  return s;
}

/** `web` (namespace from `namespace`, default "default") or `shop/web`. */
export function objectRef(r: Reader, v: unknown, namespace: unknown, path: string): ObjectRef {
  const s = r.string(v, path);
  const [a, b, extra] = s.split('/');
  if (extra !== undefined) r.fail(path, `must be NAME or NAMESPACE/NAME, got ${JSON.stringify(s)}`);
  if (b !== undefined) return { namespace: a!, name: b };
  return { namespace: r.optString(namespace, `${path.replace(/[^.]+$/, '')}namespace`) ?? 'default', name: a! };
}

export function refKey(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

export const NODE_FIELDS = ['name', 'namePrefix', 'count', 'zone', 'cpu', 'memory', 'ready', 'controlPlane', 'unschedulable', 'labels'];

export function nodeGroup(r: Reader, v: unknown, path: string, zones: readonly string[]): NodeGroup {
  const o = r.object(v, path, NODE_FIELDS);
  let names: string[];
  if (o['name'] !== undefined) {
    if (o['namePrefix'] !== undefined) r.fail(`${path}.namePrefix`, 'give either name or namePrefix, not both');
    if (o['count'] !== undefined && o['count'] !== 1) r.fail(`${path}.count`, 'a single named node has count 1');
    names = [dnsName(r, o['name'], `${path}.name`)];
  } else {
    const prefix = r.string(o['namePrefix'] ?? r.fail(path, 'needs name or namePrefix'), `${path}.namePrefix`);
    const count = r.int(o['count'] ?? 1, `${path}.count`, 1, 100_000);
    names = Array.from({ length: count }, (_, i) => `${prefix}-${i + 1}`);
    const problem = nameProblem(names[names.length - 1]!, 'subdomain');
    if (problem) r.fail(`${path}.namePrefix`, problem);
  }
  const zone = r.optString(o['zone'], `${path}.zone`);
  if (zone !== undefined && !zones.includes(zone)) r.fail(`${path}.zone`, `unknown zone ${JSON.stringify(zone)} (zones: ${zones.join(', ') || 'none'})`);
  return {
    names,
    ...(zone !== undefined ? { zone } : {}),
    cpuMillis: cpu(r, o['cpu'], `${path}.cpu`, 4000),
    memory: r.optString(o['memory'], `${path}.memory`) ?? '16Gi',
    ready: r.bool(o['ready'], `${path}.ready`, true),
    controlPlane: r.bool(o['controlPlane'], `${path}.controlPlane`, false),
    unschedulable: r.bool(o['unschedulable'], `${path}.unschedulable`, false),
    labels: r.stringMap(o['labels'], `${path}.labels`),
  };
}

