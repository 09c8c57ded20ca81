// MCS ServiceExport validation (multicluster.x-k8s.io/v1alpha1). A CRD object: the API checks
// little beyond ObjectMeta and its schema, so this accepts what a CRD with the mcs-api schema
// accepts (any spec, which the schema prunes; conditions with a type and a status) and keeps
// only what slicemesh reads: the identity, creationTimestamp (an export's age) and conditions.

import type { ServiceExport, ServiceExportCondition } from '../kube.ts';
import { MCS_API_VERSION } from '../constants.ts';
import type { Ctx } from './fields.ts';
import { compact, compactOrUnset, optInt, optList, optObject, optString, optTimestamp, reqObject, reqString } from './fields.ts';
import { NAMESPACED_SUBDOMAIN_META, readMeta } from './meta.ts';
import { openObject } from './object.ts';
import { unsetIfEmpty, unsetIfZero } from './zero-values.ts';

/** metav1.Condition's caps: type 316 characters, reason 1024, message 32768. */
const MAX_TYPE = 316;
const MAX_MESSAGE = 32_768;

function readCondition(ctx: Ctx, v: unknown, path: string): ServiceExportCondition {
  const o = reqObject(ctx, v, path);
  return compact({
    type: reqString(ctx, o['type'], `${path}.type`, MAX_TYPE),
    // metav1.Condition allows True, False, Unknown; the CRDs before it any string.
    status: reqString(ctx, o['status'], `${path}.status`, 64),
    reason: optString(ctx, unsetIfEmpty(o['reason']), `${path}.reason`),
    message: optString(ctx, unsetIfEmpty(o['message']), `${path}.message`, MAX_MESSAGE),
    lastTransitionTime: optTimestamp(ctx, unsetIfEmpty(o['lastTransitionTime']), `${path}.lastTransitionTime`),
    observedGeneration: optInt(ctx, unsetIfZero(o['observedGeneration']), `${path}.observedGeneration`, 0, Number.MAX_SAFE_INTEGER),
  });
}

/**
 * Validates a ServiceExport and returns a normalised copy: metadata (a missing namespace becomes
 * `default`) and status conditions; spec and other fields are dropped. Throws InvalidObjectError
 * naming the first bad field.
 */
export function validateServiceExport(raw: unknown, where: string): ServiceExport {
  const { ctx, o } = openObject('ServiceExport', raw, where, NAMESPACED_SUBDOMAIN_META, [MCS_API_VERSION]);
  const status = optObject(ctx, o['status'], 'status');
  return compact({
    apiVersion: MCS_API_VERSION,
    kind: 'ServiceExport' as const,
    metadata: readMeta(ctx, o['metadata'], 'metadata', NAMESPACED_SUBDOMAIN_META),
    status: status ? compactOrUnset({ conditions: optList(ctx, status['conditions'], 'status.conditions', (c, p) => readCondition(ctx, c, p)) }) : undefined,
  });
}
