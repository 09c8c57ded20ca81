// The PATCH flavours the API accepts, as pure functions over JSON values:
// - JSON merge patch (RFC 7386);
// - JSON patch (RFC 6902);
// - strategic merge patch, approximated: lists of objects that upstream merges by a key are
//   merged by that key (containers/env/volumes by name, volumeMounts by mountPath,
//   conditions by type, ownerReferences by uid, container ports by containerPort, service
//   ports by port), `finalizers` merge as a set, every other list is replaced. The
//   directives kubectl sends are honoured: `$patch: replace|delete`, `$retainKeys`,
//   `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`.
import { ApiError, badRequest } from '../store/api-error.ts';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

type Json = unknown;
type JsonMap = Record<string, Json>;

const CONTENT_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+json': 'apply',
};

export function patchTypeOf(contentType: string | undefined): PatchType | undefined {
  return CONTENT_TYPES[(contentType ?? '').split(';')[0]!.trim().toLowerCase()];
}

function isMap(v: Json): v is JsonMap {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** RFC 7386: maps merge recursively, null deletes, anything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isMap(patch)) return patch;
  const out: JsonMap = isMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function mergeKeyFor(field: string, items: readonly Json[]): string | undefined {
  switch (field) {
    case 'containers': case 'initContainers': case 'ephemeralContainers':
    case 'env': case 'volumes': case 'imagePullSecrets':
      return 'name';
    case 'volumeMounts': return 'mountPath';
    case 'conditions': return 'type';
    case 'ownerReferences': return 'uid';
    case 'topologySpreadConstraints': return 'topologyKey';
    case 'ports': return items.some((i) => isMap(i) && 'containerPort' in i) ? 'containerPort' : 'port';
    case 'addresses': return items.some((i) => isMap(i) && 'type' in i && 'address' in i) ? 'type' : undefined;
    default: return undefined;
  }
}

const PRIMITIVE_SET_LISTS = new Set(['finalizers']);

function mergeList(field: string, target: Json, patch: readonly Json[]): Json {
  const original = Array.isArray(target) ? target : [];
  if (patch.some((p) => isMap(p) && p['$patch'] === 'replace')) {
    return patch.filter((p) => !(isMap(p) && p['$patch'] === 'replace'));
  }
  if (PRIMITIVE_SET_LISTS.has(field)) return [...original, ...patch.filter((p) => !original.includes(p))];
  const key = mergeKeyFor(field, [...original, ...patch]);
  if (!key || !patch.every(isMap)) return patch;
  const out: Json[] = [...original];
  for (const item of patch as JsonMap[]) {
    const idx = out.findIndex((o) => isMap(o) && o[key] === item[key]);
    if (item['$patch'] === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
    } else if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item);
    else out.push(strategicMergePatch(undefined, item));
  }
  return out;
}

function identity(item: Json, key: string | undefined): Json {
  return key && isMap(item) ? item[key] : item;
}

function applyOrder(list: Json, order: readonly Json[], field: string): Json {
  if (!Array.isArray(list)) return list;
  const key = mergeKeyFor(field, list);
  const ranked = (item: Json): number => {
    const i = order.findIndex((o) => identity(o, key) === identity(item, key));
    return i < 0 ? order.length : i;
  };
  return list.map((item, i) => ({ item, i })).sort((a, b) => ranked(a.item) - ranked(b.item) || a.i - b.i).map((x) => x.item);
}

/** Strategic merge patch (the approximation described at the top of this file). */
export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isMap(patch)) return patch;
  if (patch['$patch'] === 'delete') return undefined;
  if (patch['$patch'] === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return rest;
  }
  const out: JsonMap = isMap(target) ? { ...target } : {};
  const orders: [string, Json[]][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch') continue;
    if (key === '$retainKeys') continue;
    if (key.startsWith('$setElementOrder/')) {
      if (Array.isArray(value)) orders.push([key.slice('$setElementOrder/'.length), value]);
      continue;
    }
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      const current = out[field];
      if (Array.isArray(current) && Array.isArray(value)) out[field] = current.filter((v) => !value.includes(v));
      continue;
    }
    if (value === null) delete out[key];
    else if (Array.isArray(value)) out[key] = mergeList(key, out[key], value);
    else if (isMap(value)) {
      const merged = strategicMergePatch(out[key], value);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else out[key] = value;
  }
  for (const [field, order] of orders) if (field in out) out[field] = applyOrder(out[field], order, field);
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(out)) if (!retain.includes(key) && !(key in patch)) delete out[key];
  }
  return out;
}

interface JsonPatchOp {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: Json;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function clone(v: Json): Json {
  return v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as Json);
}

function parentOf(doc: Json, segs: readonly string[], path: string): Json {
  let cur = doc;
  for (const s of segs.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[Number(s)] : isMap(cur) ? cur[s] : undefined;
    if (cur === undefined) throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: path ${path} does not exist`);
  }
  return cur;
}

function getAt(doc: Json, path: string): Json {
  const segs = pointer(path);
  if (segs.length === 0) return doc;
  const parent = parentOf(doc, segs, path);
  const last = segs[segs.length - 1]!;
  const v = Array.isArray(parent) ? parent[Number(last)] : isMap(parent) ? parent[last] : undefined;
  if (v === undefined) throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: path ${path} does not exist`);
  return v;
}

function removeAt(doc: Json, path: string): Json {
  const segs = pointer(path);
  const parent = parentOf(doc, segs, path);
  const last = segs[segs.length - 1]!;
  getAt(doc, path);
  if (Array.isArray(parent)) return parent.splice(Number(last), 1)[0];
  const v = (parent as JsonMap)[last];
  delete (parent as JsonMap)[last];
  return v;
}

function addAt(doc: Json, path: string, value: Json, replace: boolean): Json {
  const segs = pointer(path);
  if (segs.length === 0) return value;
  const parent = parentOf(doc, segs, path);
  const last = segs[segs.length - 1]!;
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length) throw badRequest(`invalid array index in ${path}`);
    if (replace) parent[i] = value;
    else parent.splice(i, 0, value);
  } else if (isMap(parent)) parent[last] = value;
  else throw badRequest(`cannot add at ${path}`);
  return doc;
}

/** RFC 6902 (add, remove, replace, move, copy, test). */
export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('a JSON patch must be a list of operations');
  let doc = clone(target);
  for (const raw of ops) {
    if (!isMap(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') throw badRequest('every JSON patch operation needs "op" and "path"');
    const op = raw as unknown as JsonPatchOp;
    switch (op.op) {
      case 'add': doc = addAt(doc, op.path, clone(op.value), false); break;
      case 'replace': getAt(doc, op.path); doc = addAt(doc, op.path, clone(op.value), true); break;
      case 'remove': removeAt(doc, op.path); break;
      case 'move': { const v = removeAt(doc, op.from ?? ''); doc = addAt(doc, op.path, v, false); break; }
      case 'copy': doc = addAt(doc, op.path, clone(getAt(doc, op.from ?? '')), false); break;
      case 'test':
        if (JSON.stringify(getAt(doc, op.path)) !== JSON.stringify(op.value)) throw new ApiError(422, 'Invalid', `testing value ${op.path} failed`);
        break;
      default: throw badRequest(`unknown JSON patch operation ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
}
