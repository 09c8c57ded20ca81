// Turns the text of `kubectl get ... -o json` (a List), a single object or a JSON array into
// validated model objects. Kinds slicemesh does not read are reported, not rejected.

import { InvalidObjectError } from './errors.ts';
import type { KubeObject } from './kube.ts';
import { isPlainObject, quote, typeName } from './validate/fields.ts';
import { locateJsonError } from './validate/json-syntax.ts';
import { isSupportedKind, validateKubeObject } from './validate/kube-object.ts';
import { unsetIfEmpty } from './validate/zero-values.ts';

/** Field name used in errors about the text itself rather than one object. */
export const JSON_FIELD = '<json>';
/** Lists inside lists are flattened up to this depth (kubectl never nests them at all). */
const MAX_LIST_DEPTH = 8;

export interface SkippedItem {
  /** `item <n>`: 0-based position in the flattened item sequence. */
  readonly where: string;
  readonly kind: string;
}

export interface KubeDocument {
  /** Validated, normalised objects in input order. */
  readonly objects: readonly KubeObject[];
  /** Items of kinds slicemesh does not read (ConfigMap, Namespace, ...), in input order. */
  readonly skipped: readonly SkippedItem[];
}

function isList(o: Readonly<Record<string, unknown>>): boolean {
  const kind = o['kind'];
  return typeof kind === 'string' && kind.endsWith('List') && 'items' in o;
}

/** Flattens Lists and arrays; items of a typed list (`ServiceList`) inherit its item kind. */
function flatten(v: unknown, depth: number, source: string, out: unknown[]): void {
  if (depth > MAX_LIST_DEPTH) throw new InvalidObjectError(source, JSON_FIELD, `Lists nested more than ${MAX_LIST_DEPTH} deep`);
  if (Array.isArray(v)) {
    for (const item of v) flatten(item, depth + 1, source, out);
    return;
  }
  if (!isPlainObject(v) || !isList(v)) {
    out.push(v);
    return;
  }
  const items = v['items'] ?? [];
  if (!Array.isArray(items)) throw new InvalidObjectError(source, 'items', `must be an array (got ${typeName(items)})`);
  const listKind = String(v['kind']);
  const itemKind = listKind === 'List' ? undefined : listKind.slice(0, -'List'.length);
  for (const item of items) {
    if (itemKind && isPlainObject(item) && unsetIfEmpty(item['kind']) == null) {
      // API list responses omit kind/apiVersion on their items (clients that write every field
      // send "" or null there); do not mutate the input.
      flatten({ ...item, kind: itemKind, apiVersion: unsetIfEmpty(item['apiVersion']) ?? v['apiVersion'] }, depth + 1, source, out);
    } else flatten(item, depth + 1, source, out);
  }
}

function describeJsonFailure(text: string, err: unknown): string {
  const p = locateJsonError(text);
  if (p !== null) return `invalid JSON at line ${p.line} column ${p.column}: ${p.reason}`;
  const msg = err instanceof Error ? err.message : String(err);
  return `invalid JSON: ${quote(msg).slice(1, -1)}`;
}

/**
 * Parses and validates Kubernetes JSON: a `List` or any `<Kind>List` with `items`, a single
 * object, or a JSON array; nested Lists are flattened. Services, Pods, Nodes, Endpoints and
 * EndpointSlices are validated (see validateKubeObject) and returned normalised; other kinds are
 * listed in `skipped`. A List with no items or `[]` gives no objects; empty text is an error.
 *
 * Throws InvalidObjectError: (`source`, `<json>`, ...) for text that is not JSON or not a
 * Kubernetes document; (`item <n>` or the object's name, field, ...) for the first invalid item
 * or a second object with the same kind, namespace and name.
 */
export function parseKubeDocument(text: string, source = 'input'): KubeDocument {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // tolerate a UTF-8 BOM
  if (body.trim() === '') throw new InvalidObjectError(source, JSON_FIELD, 'is empty (expected a Kubernetes List, object or array)');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    throw new InvalidObjectError(source, JSON_FIELD, describeJsonFailure(body, err));
  }
  if (!isPlainObject(json) && !Array.isArray(json)) {
    throw new InvalidObjectError(source, JSON_FIELD, `expected a Kubernetes object, a List or an array (got ${typeName(json)})`);
  }
  const items: unknown[] = [];
  flatten(json, 0, source, items);
  const objects: KubeObject[] = [];
  const skipped: SkippedItem[] = [];
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const where = `item ${i}`;
    const kind = isPlainObject(item) ? item['kind'] : undefined;
    if (typeof kind === 'string' && kind !== '' && !isSupportedKind(kind)) {
      skipped.push({ where, kind: kind.length > 63 ? kind.slice(0, 63) : kind });
      return;
    }
    const obj = validateKubeObject(item, where);
    const ns = obj.kind === 'Node' ? '' : (obj.metadata.namespace ?? 'default');
    const key = `${obj.kind} ${ns === '' ? '' : `${ns}/`}${obj.metadata.name}`;
    const first = seen.get(key);
    if (first !== undefined) throw new InvalidObjectError(key, 'metadata.name', `duplicate object (same kind, namespace and name as item ${first})`);
    seen.set(key, i);
    objects.push(obj);
  });
  return { objects, skipped };
}

/** parseKubeDocument without the skipped list: just the validated objects. */
export function parseKubeInput(text: string, source?: string): KubeObject[] {
  return [...parseKubeDocument(text, source).objects];
}
