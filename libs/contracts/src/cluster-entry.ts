// What every per-cluster entry the multi-cluster service hands the publisher shares (the
// exportstatus and serviceimports buckets): a key `<cluster>.<ns>.<name>` of this reader's
// cluster, and a versioned body naming the same namespace and name.

import type { Parsed } from './kube-event.ts';
import { parseSvcKey } from './subjects.ts';

export const fail = <T>(reason: string, field?: string): Parsed<T> => ({ ok: false, rejection: field === undefined ? { reason } : { reason, field } });
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The body of `key`'s entry once key, cluster, version and names agree; `what` names the entry in errors. Never throws. */
export function clusterEntryBody(key: string, value: unknown, cluster: string, version: number, what: string): Parsed<Record<string, unknown>> {
  let addr;
  try {
    addr = parseSvcKey(key);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e), 'key');
  }
  if (addr.cluster !== cluster) return fail(`${key}: cluster ${addr.cluster} is not ${cluster}`, 'key');
  if (!isObject(value) || value['v'] !== version) return fail(`${key}: not a version-${version} ${what}`, 'v');
  if (value['namespace'] !== addr.namespace || value['name'] !== addr.name) return fail(`${key}: holds ${String(value['namespace'])}/${String(value['name'])}`, 'metadata');
  return { ok: true, value };
}
