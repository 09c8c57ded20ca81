// Dispatch on `kind` to the validator of that kind.

import type { KubeKind, KubeObject } from '../kube.ts';
import { fail, isPlainObject, quote, typeName } from './fields.ts';
import { ROOT_PATH } from './object.ts';
import { validateEndpointSlice } from './endpoint-slice.ts';
import { validateEndpoints } from './endpoints.ts';
import { validateNode } from './node.ts';
import { validatePod } from './pod.ts';
import { validateService } from './service.ts';
import { unsetIfEmpty } from './zero-values.ts';

const VALIDATORS: Readonly<Record<KubeKind, (raw: unknown, where: string) => KubeObject>> = {
  Service: validateService,
  Pod: validatePod,
  Node: validateNode,
  Endpoints: validateEndpoints,
  EndpointSlice: validateEndpointSlice,
};

/** The kinds slicemesh reads, in the order they are listed in messages. */
export const SUPPORTED_KINDS: readonly KubeKind[] = Object.keys(VALIDATORS) as KubeKind[];

export function isSupportedKind(kind: unknown): kind is KubeKind {
  return typeof kind === 'string' && Object.hasOwn(VALIDATORS, kind);
}

/**
 * Validates `raw` with the validator of its `kind` and returns the normalised object.
 * Throws InvalidObjectError (object `where`, field `kind`) when kind is missing or unsupported.
 */
export function validateKubeObject(raw: unknown, where: string): KubeObject {
  if (!isPlainObject(raw)) fail({ object: where }, ROOT_PATH, `must be a JSON object (got ${typeName(raw)})`);
  const kind = unsetIfEmpty(raw['kind']);
  if (typeof kind !== 'string') fail({ object: where }, 'kind', kind == null ? 'is required' : `must be a string (got ${typeName(kind)})`);
  if (!isSupportedKind(kind)) fail({ object: where }, 'kind', `${quote(kind)} is not one of ${SUPPORTED_KINDS.join(', ')}`);
  return VALIDATORS[kind](raw, where);
}
