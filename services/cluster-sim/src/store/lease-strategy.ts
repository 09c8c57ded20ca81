// Leases (coordination.k8s.io/v1): what leader election and node heartbeats write. Upstream
// checks only the numbers; optimistic concurrency (409 on a stale resourceVersion) comes from
// the store, as for every kind. The CoordinatedLeaderElection fields (`strategy`,
// `preferredHolder`) are dropped, as by a 1.32 API server with that feature gate off.
import { fieldInvalid } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import type { KubeObj } from './types.ts';
import { isRecord } from './validation.ts';

const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function leaseCauses(obj: KubeObj): StatusCause[] {
  const spec = obj['spec'];
  if (spec === undefined || spec === null) return [];
  if (!isRecord(spec)) return [fieldInvalid('spec', spec, 'must be an object')];
  const causes: StatusCause[] = [];
  const duration = spec['leaseDurationSeconds'];
  if (duration !== undefined && duration !== null) {
    if (!Number.isInteger(duration)) causes.push(fieldInvalid('spec.leaseDurationSeconds', duration, 'must be an integer'));
    else if ((duration as number) <= 0) causes.push(fieldInvalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  }
  const transitions = spec['leaseTransitions'];
  if (transitions !== undefined && transitions !== null) {
    if (!Number.isInteger(transitions)) causes.push(fieldInvalid('spec.leaseTransitions', transitions, 'must be an integer'));
    else if ((transitions as number) < 0) causes.push(fieldInvalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  }
  const holder = spec['holderIdentity'];
  if (holder !== undefined && holder !== null && typeof holder !== 'string') causes.push(fieldInvalid('spec.holderIdentity', holder, 'must be a string'));
  for (const field of ['acquireTime', 'renewTime']) {
    const t = spec[field];
    if (t !== undefined && t !== null && (typeof t !== 'string' || !MICRO_TIME.test(t) || Number.isNaN(Date.parse(t)))) {
      causes.push(fieldInvalid(`spec.${field}`, t, 'must be an RFC 3339 time, e.g. 2026-01-01T00:00:00.000000Z'));
    }
  }
  return causes;
}

export function completeLease(obj: KubeObj): KubeObj {
  const { strategy: _s, preferredHolder: _p, ...spec } = isRecord(obj['spec']) ? obj['spec'] : {};
  return { ...obj, spec };
}
