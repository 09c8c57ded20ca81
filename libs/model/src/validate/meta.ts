// ObjectMeta: identity, labels, annotations and owner references.

import type { ObjectMeta, OwnerReference } from '../kube.ts';
import type { Ctx } from './fields.ts';
import {
  compact,
  fail,
  isPlainObject,
  optBool,
  optInt,
  optList,
  optString,
  optStringMap,
  optTimestamp,
  reqChecked,
  reqObject,
  reqString,
} from './fields.ts';
import { dns1035LabelProblem, dns1123LabelProblem, dns1123SubdomainProblem, labelValueProblem, qualifiedNameProblem } from './names.ts';
import { unsetIfEmpty, unsetIfZero } from './zero-values.ts';

/** Upstream caps the summed size of all annotation keys and values at 256 KiB. */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;
const MAX_OWNER_REFERENCES = 100;
const MAX_UID = 128;

export interface MetaRules {
  /** The name rule of the kind (DNS-1035 label for Services, DNS-1123 subdomain for most). */
  readonly name: (s: string) => string | null;
  readonly namespaced: boolean;
}

const PRINTABLE = /^[\x21-\x7e]{1,253}$/;

/**
 * How error messages name an object: `Service default/web`, `Node node-1`, or — when the
 * name or namespace is missing or could not be printed safely on one line — `<where> (kind X)`.
 * A namespaced object without a namespace (or with "") is shown in `default`, where the API
 * server would put it.
 */
export function objectLabel(kind: string, raw: unknown, where: string, namespaced: boolean): string {
  const meta = isPlainObject(raw) ? raw['metadata'] : undefined;
  const name = isPlainObject(meta) ? meta['name'] : undefined;
  const ns = isPlainObject(meta) ? (unsetIfEmpty(meta['namespace']) ?? 'default') : undefined;
  if (typeof name !== 'string' || !PRINTABLE.test(name)) return `${where} (kind ${kind})`;
  if (!namespaced) return `${kind} ${name}`;
  if (typeof ns !== 'string' || !PRINTABLE.test(ns)) return `${where} (kind ${kind})`;
  return `${kind} ${ns}/${name}`;
}

function readOwnerReference(ctx: Ctx, v: unknown, path: string): OwnerReference {
  const o = reqObject(ctx, v, path);
  const nonEmpty = (field: string, max: number): string => {
    const s = reqString(ctx, o[field], `${path}.${field}`, max);
    if (s.length === 0) fail(ctx, `${path}.${field}`, 'must not be empty');
    return s;
  };
  return compact({
    apiVersion: nonEmpty('apiVersion', 317),
    kind: nonEmpty('kind', 63),
    name: nonEmpty('name', 253),
    uid: nonEmpty('uid', MAX_UID),
    controller: optBool(ctx, o['controller'], `${path}.controller`),
    blockOwnerDeletion: optBool(ctx, o['blockOwnerDeletion'], `${path}.blockOwnerDeletion`),
  });
}

function readAnnotations(ctx: Ctx, v: unknown, path: string): Record<string, string> | undefined {
  const out = optStringMap(ctx, v, path, qualifiedNameProblem, () => null, Number.MAX_SAFE_INTEGER);
  if (out === undefined) return undefined;
  let size = 0;
  for (const [k, val] of Object.entries(out)) size += k.length + val.length;
  if (size > MAX_ANNOTATIONS_BYTES) fail(ctx, path, `total size must be at most ${MAX_ANNOTATIONS_BYTES} characters (got ${size})`);
  return out;
}

/**
 * Reads `metadata`. Keeps the fields of ObjectMeta and drops the rest (managedFields, ...).
 * A namespaced object without a namespace (or with "") gets `default`; a cluster-scoped one
 * must not have one.
 */
export function readMeta(ctx: Ctx, v: unknown, path: string, rules: MetaRules): ObjectMeta {
  const m = reqObject(ctx, v, path);
  const name = reqChecked(ctx, m['name'], `${path}.name`, rules.name);
  // ObjectMeta's strings and generation are plain Go fields: "" and 0 are unset (F.13).
  const ns = unsetIfEmpty(m['namespace']);
  let namespace: string | undefined;
  if (rules.namespaced) {
    namespace = ns == null ? 'default' : reqChecked(ctx, ns, `${path}.namespace`, dns1123LabelProblem);
  } else if (ns != null) {
    fail(ctx, `${path}.namespace`, 'must be empty for a cluster-scoped object');
  }
  const uid = optString(ctx, unsetIfEmpty(m['uid']), `${path}.uid`, MAX_UID);
  const generateName = optString(ctx, unsetIfEmpty(m['generateName']), `${path}.generateName`, 253);
  const ownerReferences = optList(ctx, m['ownerReferences'], `${path}.ownerReferences`, (o, p) => readOwnerReference(ctx, o, p), MAX_OWNER_REFERENCES);
  const controllers = ownerReferences?.filter((o) => o.controller === true).length ?? 0;
  if (controllers > 1) fail(ctx, `${path}.ownerReferences`, `only one reference may set controller=true (got ${controllers})`);
  return compact({
    name,
    namespace,
    uid,
    // resourceVersion is opaque; only its size is capped.
    resourceVersion: optString(ctx, unsetIfEmpty(m['resourceVersion']), `${path}.resourceVersion`, 64),
    generation: optInt(ctx, unsetIfZero(m['generation']), `${path}.generation`, 0, Number.MAX_SAFE_INTEGER),
    generateName,
    creationTimestamp: optTimestamp(ctx, m['creationTimestamp'], `${path}.creationTimestamp`),
    deletionTimestamp: optTimestamp(ctx, m['deletionTimestamp'], `${path}.deletionTimestamp`),
    labels: optStringMap(ctx, m['labels'], `${path}.labels`, qualifiedNameProblem, labelValueProblem),
    annotations: readAnnotations(ctx, m['annotations'], `${path}.annotations`),
    ownerReferences,
  });
}

/** Name rules per kind (Service names are DNS-1035 labels; the others DNS-1123 subdomains). */
export const SERVICE_META: MetaRules = { name: dns1035LabelProblem, namespaced: true };
export const NAMESPACED_SUBDOMAIN_META: MetaRules = { name: dns1123SubdomainProblem, namespaced: true };
export const CLUSTER_SUBDOMAIN_META: MetaRules = { name: dns1123SubdomainProblem, namespaced: false };
