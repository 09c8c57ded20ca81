// What one run of the stack names in NATS and Postgres. A fresh run gets names no other run
// uses (so `npm start` twice, or a test beside a demo, never share state); --keep-state uses
// the production names, so a second run continues where the first stopped.

import { randomBytes } from 'node:crypto';
import type { BackboneNames } from '@slicemesh/nats';
import { DEFAULT_NAMES } from '@slicemesh/nats';

/** The stream and bucket names, the subject prefix and the Postgres schema of one run. */
export interface RunNames {
  /** '' for the persistent names, else the suffix every name carries. */
  readonly id: string;
  readonly names: BackboneNames;
  readonly schema: string;
  /** True when the names are shared by every --keep-state run (never deleted at exit). */
  readonly persistent: boolean;
}

/** The production names and the services' default schema `slicemesh`. */
export const PERSISTENT_RUN: RunNames = Object.freeze({ id: '', names: DEFAULT_NAMES, schema: 'slicemesh', persistent: true });

/** A run id: lowercase base-36 time plus random bytes, usable in stream, subject and schema names. */
export function newRunId(now: number, random: Uint8Array = randomBytes(3)): string {
  return `${Math.floor(now / 1000).toString(36)}${Buffer.from(random).toString('hex')}`;
}

/**
 * Names for the run `id` ([a-z0-9]+): streams KUBE_<id>, SLICES_<id>, DLQ_<id>, EVENTS_<id>, subject prefix
 * `r<id>.`, buckets svc_<id>, views_<id> and hinted_<id>, schema slicemesh_<id>.
 * Throws for an id outside [a-z0-9]{1,40}.
 */
export function freshRunNames(id: string): RunNames {
  if (!/^[a-z0-9]{1,40}$/.test(id)) throw new Error(`run id must be 1..40 characters of [a-z0-9], got ${JSON.stringify(id)}`);
  return {
    id,
    names: { kube: `KUBE_${id}`, slices: `SLICES_${id}`, dlq: `DLQ_${id}`, events: `EVENTS_${id}`, prefix: `r${id}.`, svc: `svc_${id}`, views: `views_${id}`, hinted: `hinted_${id}` },
    schema: `slicemesh_${id}`,
    persistent: false,
  };
}

/** The JetStream streams a run owns: its four streams and the two buckets' backing streams. */
export function streamsOf(names: BackboneNames): readonly string[] {
  return [names.kube, names.slices, names.dlq, ...(names.events === undefined ? [] : [names.events]), `KV_${names.svc}`, `KV_${names.views}`, `KV_${names.hinted}`];
}
