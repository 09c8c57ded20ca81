// Ingest: a batch of KUBE messages in, one transaction out. The transaction stores the object (or its
// tombstone), marks the affected Services dirty and advances the consumer's offset, so after a
// crash either all of it happened or none did. Handlers only mark; reconciles do the work.
//
// Redelivery: a message at or below the stored offset was applied already and is skipped.
// That is only sound when a consumer applies its messages in stream order, which is why the
// slicer's durables allow one unacknowledged batch at a time (slicer.ts), acked or nak'ed whole.

import type { Node, Pod, Service } from '@slicemesh/model';
import type { KubeObjectRow, ServiceKey } from '@slicemesh/db';
import { partitionOf } from '@slicemesh/nats';
import { endpointsConcernService, nodeChangeRelevant, parseServiceKeyString, servicesForPodChange, servicesSelectingPods } from './affected.ts';
import type { DecodeContext, KubeChange } from './envelope.ts';
import { DELETED, decodeKubeMessage } from './envelope.ts';
import type { DeadLetterSink, IngestStore, IngestTx } from './ports.ts';

export interface IngestMessage {
  readonly subject: string;
  /** KUBE stream sequence. */
  readonly seq: number;
  readonly data: unknown;
  readonly parseError?: string;
  readonly raw: Uint8Array;
}

export interface IngestDeps extends DecodeContext {
  readonly store: IngestStore;
  readonly deadLetters: DeadLetterSink;
  /** Partitions this instance reconciles: node changes only mark their Services. */
  readonly ownsPartition: (partition: number) => boolean;
  /** Delay for pod-triggered reconciles (A.12.2); others are queued at once. */
  readonly batchPeriodMs: number;
}

export type IngestResult =
  /** The object changed and its Services were marked. */
  | 'applied'
  /** Stored already at this or a newer resourceVersion (e.g. a second watcher); nothing marked. */
  | 'stale'
  /** seq ≤ offset: a redelivery of an applied message. */
  | 'duplicate'
  /** Rejected and published to the dead-letter subject. */
  | 'dead-lettered';

export interface IngestOutcome {
  readonly result: IngestResult;
  /** Kind from the envelope, when it was valid. */
  readonly kind?: string;
  /** Services marked dirty, sorted by namespace/name. */
  readonly keys: readonly ServiceKey[];
  /** How long to wait before reconciling `keys` (the batching window). */
  readonly delayMs: number;
  /** For dead letters: why. */
  readonly reason?: string;
}

/**
 * Applies one message for `consumer` (the offset name); see ingestBatch.
 */
export async function ingestMessage(consumer: string, msg: IngestMessage, deps: IngestDeps): Promise<IngestOutcome> {
  const [out] = await ingestBatch(consumer, [msg], deps);
  if (out === undefined) throw new Error('ingestBatch returned no outcome');
  return out;
}

/**
 * Applies `msgs` (in stream order) for `consumer` in ONE transaction: every object write, dirty
 * mark and the offset advance commit together, so a batch is applied whole or not at all and a
 * redelivered batch is skipped message by message. Invalid input is dead-lettered (before the
 * commit; dead letters carry the KUBE sequence, so a retried batch stores each once) and
 * counted as applied, never retried; store and dead-letter failures reject, and the caller
 * retries the whole batch. Returns one outcome per message, in order.
 */
export async function ingestBatch(consumer: string, msgs: readonly IngestMessage[], deps: IngestDeps): Promise<IngestOutcome[]> {
  const decoded = msgs.map((m) => decodeKubeMessage(m, deps));
  return deps.store.transaction(async (tx) => {
    const applied = await tx.getOffset(consumer);
    let offset = applied;
    const outcomes: IngestOutcome[] = [];
    for (const [i, msg] of msgs.entries()) {
      const d = decoded[i];
      if (d === undefined || msg.seq <= offset) {
        outcomes.push({ result: 'duplicate', ...(d?.ok ? { kind: d.change.kind } : {}), keys: [], delayMs: 0 });
        continue;
      }
      offset = msg.seq;
      if (!d.ok) {
        const { reason, field } = d.rejection;
        await deps.deadLetters.publish({ reason, ...(field !== undefined ? { field } : {}), subject: msg.subject, seq: msg.seq, raw: msg.raw });
        outcomes.push({ result: 'dead-lettered', keys: [], delayMs: 0, reason: field === undefined ? reason : `${field}: ${reason}` });
        continue;
      }
      const change = d.change;
      const row = toRow(change, msg.seq);
      const before = await tx.loadObject(row);
      const changed = await tx.upsertObject(row);
      const keys = changed ? await affectedKeys(tx, change, before, deps) : [];
      await tx.markDirty(keys, msg.seq);
      outcomes.push({ result: changed ? 'applied' : 'stale', kind: change.kind, keys, delayMs: change.kind === 'Pod' ? deps.batchPeriodMs : 0 });
    }
    if (offset > applied) await tx.advanceOffset(consumer, offset);
    return outcomes;
  });
}

function toRow(c: KubeChange, seq: number): KubeObjectRow {
  return {
    cluster: c.cluster,
    kind: c.kind,
    namespace: c.namespace,
    name: c.name,
    uid: c.uid,
    resourceVersion: c.resourceVersion,
    deleted: c.type === DELETED,
    body: c.object,
    kubeSeq: seq,
  };
}

function toKeys(cluster: string, keys: readonly string[]): ServiceKey[] {
  // Sorted, so concurrent markers lock rows in one order.
  return [...new Set(keys)].sort().map((k) => ({ cluster, ...parseServiceKeyString(k) }));
}

async function affectedKeys(tx: IngestTx, c: KubeChange, before: KubeObjectRow | undefined, deps: IngestDeps): Promise<ServiceKey[]> {
  const live = <T>(row: KubeObjectRow | undefined): T | undefined => (row === undefined || row.deleted ? undefined : (row.body as T));
  const after = c.type === DELETED ? undefined : c.object;
  switch (c.kind) {
    case 'Service':
      return toKeys(c.cluster, [`${c.namespace}/${c.name}`]); // A.12.1
    case 'Endpoints': {
      const svc = live<Service>(await tx.loadObject({ cluster: c.cluster, kind: 'Service', namespace: c.namespace, name: c.name }));
      return endpointsConcernService(svc) ? toKeys(c.cluster, [`${c.namespace}/${c.name}`]) : [];
    }
    case 'Pod': {
      const services = await tx.servicesInNamespace(c.cluster, c.namespace);
      // A delete of a pod we never saw live still names its final labels.
      const old = live<Pod>(before) ?? (after === undefined ? (c.object as Pod) : undefined);
      return toKeys(c.cluster, servicesForPodChange(services, old, after as Pod | undefined));
    }
    case 'Node': {
      if (!nodeChangeRelevant(live<Node>(before), after as Node | undefined)) return [];
      const pods = (await tx.podsOnNode(c.cluster, c.name)).filter((p) => deps.ownsPartition(partitionOf(p.metadata.namespace ?? 'default', deps.partitions)));
      const byNamespace = new Map<string, Pod[]>();
      for (const p of pods) {
        const ns = p.metadata.namespace ?? 'default';
        byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), p]);
      }
      const keys: string[] = [];
      for (const [ns, nsPods] of [...byNamespace].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        keys.push(...servicesSelectingPods(await tx.servicesInNamespace(c.cluster, ns), nsPods));
      }
      return toKeys(c.cluster, keys);
    }
    default: {
      const unknownKind: never = c.kind;
      throw new Error(`unhandled kind ${String(unknownKind)}`);
    }
  }
}
