// Node validation (zone label, readiness and allocatable CPU feed the topology cache, C.1).

import type { Node, NodeCondition } from '../kube.ts';
import type { Ctx } from './fields.ts';
import { compact, compactOrUnset, fail, keyPath, optBool, optList, optObject, quote, reqEnum, reqChecked, reqObject, reqString, typeName } from './fields.ts';
import { CLUSTER_SUBDOMAIN_META, readMeta } from './meta.ts';
import { qualifiedNameProblem } from './names.ts';
import { openObject } from './object.ts';
import { unsetIfFalse } from './zero-values.ts';

/** Kubernetes resource.Quantity text: a signed decimal number with an optional suffix. */
const QUANTITY = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const MAX_RESOURCES = 1000;

/** Allocatable resources; numbers are accepted and kept as their decimal text. */
function readResources(ctx: Ctx, v: unknown, path: string): Record<string, string> | undefined {
  const o = optObject(ctx, v, path);
  if (o === undefined) return undefined;
  const entries = Object.entries(o);
  if (entries.length === 0) return undefined; // an empty map is unset, as an absent one
  if (entries.length > MAX_RESOURCES) fail(ctx, path, `must have at most ${MAX_RESOURCES} entries (got ${entries.length})`);
  const out: Record<string, string> = {};
  for (const [k, q] of entries) {
    const kp = qualifiedNameProblem(k);
    if (kp !== null) fail(ctx, keyPath(path, k), `key ${quote(k)} ${kp}`);
    let text: string;
    if (typeof q === 'number' && Number.isFinite(q)) text = String(q);
    else if (typeof q === 'string') text = q;
    else return fail(ctx, keyPath(path, k), `must be a quantity string (got ${typeName(q)})`);
    if (text.length > 64 || !QUANTITY.test(text)) fail(ctx, keyPath(path, k), `${quote(text)} must be a quantity such as "4", "3800m" or "16Gi"`);
    out[k] = text;
  }
  return out;
}

function readCondition(ctx: Ctx, v: unknown, path: string): NodeCondition {
  const o = reqObject(ctx, v, path);
  return {
    type: reqChecked(ctx, o['type'], `${path}.type`, qualifiedNameProblem),
    status: reqEnum(ctx, o['status'], `${path}.status`, ['True', 'False', 'Unknown'] as const),
  };
}

function readAddress(ctx: Ctx, v: unknown, path: string): { type: string; address: string } {
  const o = reqObject(ctx, v, path);
  return { type: reqString(ctx, o['type'], `${path}.type`, 63), address: reqString(ctx, o['address'], `${path}.address`, 253) };
}

/**
 * Validates a Node and returns a normalised copy holding only the Node model's fields
 * (allocatable quantities as strings; an empty spec or status left out). Nodes are
 * cluster-scoped: a namespace is an error. Throws InvalidObjectError naming the first bad field.
 */
export function validateNode(raw: unknown, where: string): Node {
  const { ctx, o } = openObject('Node', raw, where, CLUSTER_SUBDOMAIN_META, ['v1']);
  const metadata = readMeta(ctx, o['metadata'], 'metadata', CLUSTER_SUBDOMAIN_META);
  const spec = optObject(ctx, o['spec'], 'spec');
  const status = optObject(ctx, o['status'], 'status');
  // spec and status are plain Go structs and unschedulable a plain bool: `{}` and false are
  // unset (F.13), so a spec or status with nothing we read is left out.
  return compact({
    apiVersion: 'v1',
    kind: 'Node' as const,
    metadata,
    spec: spec ? compactOrUnset({ unschedulable: optBool(ctx, unsetIfFalse(spec['unschedulable']), 'spec.unschedulable') }) : undefined,
    status: status
      ? compactOrUnset({
          allocatable: readResources(ctx, status['allocatable'], 'status.allocatable'),
          conditions: optList(ctx, status['conditions'], 'status.conditions', (c, p) => readCondition(ctx, c, p), 100),
          addresses: optList(ctx, status['addresses'], 'status.addresses', (a, p) => readAddress(ctx, a, p), 100),
        })
      : undefined,
  });
}
