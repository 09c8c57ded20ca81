// The SLICES stream's message: what one slicer reconcile changed for one Service. The slicer
// writes it to its outbox (the relay publishes it); the hints service and the replay read it.

import type { EndpointSlice } from '@slicemesh/model';
import { InvalidObjectError, LABEL_SERVICE_NAME, validateEndpointSlice } from '@slicemesh/model';
import type { Parsed } from './kube-event.ts';
import type { SubjectOptions } from './subjects.ts';
import { misfiledPartition, parseSlicesSubject } from './subjects.ts';

export const SLICE_CHANGED = 'SliceChanged.v1';

/** The KUBE view a reconcile read: every partition message ≤ to and node message ≤ nodesTo was applied. */
export interface KubeSeqRange {
  /** First sequence that marked the Service since its previous reconcile. */
  readonly from: number;
  /** The offset of the Service's partition consumer (kube_seq_to of the replay record). */
  readonly to: number;
  /** The offset of the node consumer. */
  readonly nodesTo: number;
}

/** Body of a SLICES message (one per reconcile that changed something). */
export interface SliceChangedMessage {
  readonly type: typeof SLICE_CHANGED;
  readonly cluster: string;
  readonly namespace: string;
  readonly service: string;
  /** Created and updated slices as stored (uid and generation set), sorted by name. */
  readonly upserts: readonly EndpointSlice[];
  /** Names of deleted slices, sorted. */
  readonly deletes: readonly string[];
  /** null only in messages of producers that did not record it. */
  readonly kubeSeq: KubeSeqRange | null;
  readonly reconcileID: string | null;
}

/**
 * `p<to>n<nodesTo>-<random>`: unique enough to correlate log lines, and it names the view, so
 * the replay record (which has one sequence column) also carries the node bound.
 */
export function makeReconcileID(to: number, nodesTo: number, random: string): string {
  return `p${to}n${nodesTo}-${random}`;
}

/** The view bounds of a reconcile ID made by makeReconcileID; undefined for other IDs. */
export function parseReconcileID(id: string): { readonly to: number; readonly nodesTo: number } | undefined {
  const m = /^p(\d+)n(\d+)-/.exec(id);
  return m === null ? undefined : { to: Number(m[1]), nodesTo: Number(m[2]) };
}

export interface SliceChangedContext extends SubjectOptions {
  /** The cluster the reader serves; a message of another cluster is rejected. */
  readonly cluster: string;
  /** PARTITIONS, when the reader knows it: a subject's partition token must be the namespace's. */
  readonly partitions?: number;
}

function isObject(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class Reject extends Error {
  readonly reason: string;
  readonly field: string;

  constructor(
    reason: string,
    field: string,
  ) {
    super(reason);
    this.reason = reason;
    this.field = field;
  }
}

function str(o: Readonly<Record<string, unknown>>, field: string): string {
  const v = o[field];
  if (typeof v !== 'string') throw new Reject(v === undefined ? 'is required' : 'must be a string', field);
  return v;
}

function kubeSeqOf(v: unknown): KubeSeqRange | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v) || !Number.isSafeInteger(v['from']) || !Number.isSafeInteger(v['to'])) throw new Reject('must be {from, to[, nodesTo]} with integer sequences', 'kubeSeq');
  const nodesTo = v['nodesTo'];
  if (nodesTo !== undefined && !Number.isSafeInteger(nodesTo)) throw new Reject('must be an integer sequence', 'kubeSeq.nodesTo');
  return { from: v['from'] as number, to: v['to'] as number, nodesTo: (nodesTo as number | undefined) ?? (v['to'] as number) };
}

/**
 * Parses a SLICES message received on `subject`. Every upsert must be a valid EndpointSlice of
 * the message's namespace, labelled with its service; the subject must name the same cluster,
 * namespace and service as the body. Returns normalised slices; never throws.
 */
export function parseSliceChanged(data: unknown, subject: string, ctx: SliceChangedContext): Parsed<SliceChangedMessage> {
  try {
    if (!isObject(data)) throw new Reject('the body must be a JSON object', '<body>');
    if (data['type'] !== SLICE_CHANGED) throw new Reject(`unknown type ${JSON.stringify(data['type'])} (want ${SLICE_CHANGED})`, 'type');
    const cluster = str(data, 'cluster');
    if (cluster !== ctx.cluster) throw new Reject(`is ${JSON.stringify(cluster)}, this reader serves ${JSON.stringify(ctx.cluster)}`, 'cluster');
    const namespace = str(data, 'namespace');
    const service = str(data, 'service');
    let addr;
    try {
      addr = parseSlicesSubject(subject, ctx);
    } catch (err) {
      throw new Reject(`subject ${JSON.stringify(subject)}: ${err instanceof Error ? err.message : String(err)}`, 'subject');
    }
    if (addr.cluster !== cluster || addr.namespace !== namespace || addr.service !== service) throw new Reject(`subject ${subject} does not name ${cluster}/${namespace}/${service}`, 'subject');
    const right = misfiledPartition(addr, ctx.partitions);
    if (right !== undefined) {
      throw new Reject(`subject ${subject}: partition ${addr.partition} is not ${right} = partitionOf(namespace, ${ctx.partitions}); do the slicer and its readers agree on PARTITIONS?`, 'subject');
    }
    const rawUpserts = data['upserts'] ?? [];
    const rawDeletes = data['deletes'] ?? [];
    if (!Array.isArray(rawUpserts)) throw new Reject('must be an array', 'upserts');
    if (!Array.isArray(rawDeletes)) throw new Reject('must be an array', 'deletes');
    const upserts = rawUpserts.map((raw: unknown, i) => {
      const path = `upserts[${i}]`;
      let slice: EndpointSlice;
      try {
        slice = validateEndpointSlice(raw, path);
      } catch (err) {
        if (err instanceof InvalidObjectError) throw new Reject(`${err.object}: ${err.reason}`, `${path}.${err.field}`);
        throw err;
      }
      if (slice.metadata.namespace !== namespace) throw new Reject(`namespace ${JSON.stringify(slice.metadata.namespace)} is not the message's`, `${path}.metadata.namespace`);
      if (slice.metadata.labels?.[LABEL_SERVICE_NAME] !== service) throw new Reject(`must be ${JSON.stringify(service)}`, `${path}.metadata.labels["${LABEL_SERVICE_NAME}"]`);
      return slice;
    });
    const deletes = rawDeletes.map((name: unknown, i) => {
      if (typeof name !== 'string' || name === '') throw new Reject('must be a non-empty slice name', `deletes[${i}]`);
      return name;
    });
    const reconcileID = data['reconcileID'];
    if (reconcileID !== undefined && reconcileID !== null && typeof reconcileID !== 'string') throw new Reject('must be a string', 'reconcileID');
    return { ok: true, value: { type: SLICE_CHANGED, cluster, namespace, service, upserts, deletes, kubeSeq: kubeSeqOf(data['kubeSeq']), reconcileID: reconcileID ?? null } };
  } catch (err) {
    if (err instanceof Reject) return { ok: false, rejection: { reason: err.reason, field: err.field } };
    throw err;
  }
}
