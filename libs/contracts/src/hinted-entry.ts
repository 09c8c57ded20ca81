// An entry of the `hinted` KV bucket as its stream delivers it: `$KV.<bucket>.<key>` with the
// finished slice as the value, or a delete marker (header KV-Operation: DEL or PURGE). The hints
// service writes the bucket; the publisher reads its stream in order and writes the slices to
// the Kubernetes API.

import type { EndpointSlice } from '@slicemesh/model';
import { InvalidObjectError, LABEL_SERVICE_NAME, validateEndpointSlice } from '@slicemesh/model';
import { TokenDecodeError } from './errors.ts';
import type { Parsed } from './kube-event.ts';
import { parseHintedKey, svcClusterFilter } from './subjects.ts';

/** One slice of one Service: its new state, or null when it was deleted. */
export interface HintedEntry {
  readonly cluster: string;
  readonly namespace: string;
  readonly service: string;
  readonly name: string;
  readonly slice: EndpointSlice | null;
}

/** The subject filter of one cluster's entries on the bucket's stream. */
export function hintedStreamFilter(bucket: string, cluster: string): string {
  return `$KV.${bucket}.${svcClusterFilter(cluster)}`;
}

/** The stream behind a KV bucket (the NATS KV convention). */
export function kvStreamOf(bucket: string): string {
  return `KV_${bucket}`;
}

/**
 * Parses one message of the bucket's stream. The key must be a hinted key of `cluster`; a value
 * must be a valid EndpointSlice whose namespace, name and service label are the key's. Never throws.
 */
export function parseHintedEntry(
  subject: string,
  data: unknown,
  headers: Readonly<Record<string, string>>,
  ctx: { readonly bucket: string; readonly cluster: string },
): Parsed<HintedEntry> {
  const prefix = `$KV.${ctx.bucket}.`;
  if (!subject.startsWith(prefix)) return { ok: false, rejection: { reason: `subject ${JSON.stringify(subject)} is not of bucket ${ctx.bucket}`, field: 'subject' } };
  let key;
  try {
    key = parseHintedKey(subject.slice(prefix.length));
  } catch (err) {
    if (err instanceof TokenDecodeError) return { ok: false, rejection: { reason: err.message, field: 'subject' } };
    throw err;
  }
  if (key.cluster !== ctx.cluster) return { ok: false, rejection: { reason: `names cluster ${JSON.stringify(key.cluster)}, this reader serves ${JSON.stringify(ctx.cluster)}`, field: 'subject' } };
  const base = { cluster: key.cluster, namespace: key.namespace, service: key.service, name: key.slice };
  const op = headers['KV-Operation'];
  if (op === 'DEL' || op === 'PURGE') return { ok: true, value: { ...base, slice: null } };
  let slice: EndpointSlice;
  try {
    slice = validateEndpointSlice(data, 'value');
  } catch (err) {
    if (err instanceof InvalidObjectError) return { ok: false, rejection: { reason: `${err.object}: ${err.reason}`, field: `value.${err.field}` } };
    throw err;
  }
  const mismatch =
    slice.metadata.namespace !== key.namespace ? 'metadata.namespace'
    : slice.metadata.name !== key.slice ? 'metadata.name'
    : slice.metadata.labels?.[LABEL_SERVICE_NAME] !== key.service ? `metadata.labels["${LABEL_SERVICE_NAME}"]`
    : undefined;
  if (mismatch !== undefined) return { ok: false, rejection: { reason: `does not match the key ${subject.slice(prefix.length)}`, field: `value.${mismatch}` } };
  return { ok: true, value: { ...base, slice } };
}
