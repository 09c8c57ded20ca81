// The durable consumers of the hints service: their names, filters and offsets, and the
// startup wait until each has caught up with the backlog it found (habit 5).

import type { BackboneNames, JetStreamManager } from '@slicemesh/nats';
import { fnv1a32, hintsKubeFilter, hintsOffsetName, legacySlicesFilter, nextSeqMatching, slicesFilter, slicesPartitionFilter } from '@slicemesh/nats';
import type { Clock } from '@slicemesh/runtime';
import type { ConsumerRole } from './ingest.ts';

export interface ConsumerSpec {
  readonly role: ConsumerRole;
  /** The KUBE partition whose lease the consumer's writes carry. */
  readonly partition: number;
  readonly stream: string;
  readonly durable: string;
  readonly filterSubject: string;
  /** The row in consumer_offsets guarding this consumer's writes. */
  readonly offset: string;
  /**
   * SLICES only: while the stream holds a subject in the older form (no partition token,
   * `older`) at or after where the consumer starts, it reads `broad`, every partition's changes,
   * and skips the other partitions' (ingest.ts) instead of missing those older messages.
   */
  readonly olderForm?: { readonly older: string; readonly broad: string };
}

/** `cluster` as a durable-name fragment: itself when already [A-Za-z0-9_-], else sanitised plus a hash so names stay distinct. */
export function clusterFragment(cluster: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(cluster)) return cluster;
  return `${cluster.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)}_${fnv1a32(cluster).toString(16)}`;
}

/**
 * The consumers of one KUBE partition: KUBE services `kube.<cluster>.<N>.service.>` and other
 * controllers' EndpointSlices `kube.<cluster>.<N>.endpointslice.>`, KUBE nodes
 * `kube.<cluster>.node.>` (every node: each partition's owner must see every node change, so
 * each partition has its own node consumer) and SLICES `slices.<cluster>.<N>.>` (the partition's
 * own slice changes; see `olderForm` for a stream that still holds subjects without the token).
 * Durables `<prefix>-<cluster>-p<N>-<role>`, offsets `hints:<cluster>:<stream>:p<N>:<role>`.
 */
export function consumerSpecs(cluster: string, names: BackboneNames, durablePrefix: string, partition: number): readonly ConsumerSpec[] {
  const base = `${durablePrefix}-${clusterFragment(cluster)}-p${partition}`;
  const spec = (role: ConsumerRole, stream: string, filterSubject: string): ConsumerSpec => ({
    role,
    partition,
    stream,
    durable: `${base}-${role}`,
    filterSubject,
    offset: hintsOffsetName(cluster, stream, partition, role),
    ...(role === 'slices' ? { olderForm: { older: legacySlicesFilter(cluster, names), broad: slicesFilter(cluster, names) } } : {}),
  });
  return [
    spec('nodes', names.kube, hintsKubeFilter('nodes', cluster, partition, names)),
    spec('services', names.kube, hintsKubeFilter('services', cluster, partition, names)),
    spec('endpointslices', names.kube, hintsKubeFilter('endpointslices', cluster, partition, names)),
    spec('slices', names.slices, slicesPartitionFilter(cluster, partition, names)),
  ];
}

/** The consumers of every partition 0..partitions-1 (what the replicas of a cluster consume together). */
export function clusterConsumerSpecs(cluster: string, names: BackboneNames, durablePrefix: string, partitions: number): readonly ConsumerSpec[] {
  return Array.from({ length: partitions }, (_, p) => consumerSpecs(cluster, names, durablePrefix, p)).flat();
}

/**
 * The filter `spec`'s durable reads from `startSeq`: its own, or, for a SLICES consumer whose
 * stream still holds an older-form subject at or after `startSeq`, the broad one (nothing of
 * those older messages may be missed; the next start narrows it again once they are behind).
 */
export async function filterFrom(jsm: JetStreamManager, spec: ConsumerSpec, startSeq: number): Promise<string> {
  if (spec.olderForm === undefined) return spec.filterSubject;
  const older = await nextSeqMatching(jsm, spec.stream, spec.olderForm.older, Math.max(1, startSeq));
  return older === null ? spec.filterSubject : spec.olderForm.broad;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clock.clearTimer(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Resolves once the durable has handled everything up to `targetSeq` (the stream's last
 * sequence when it started) or has nothing pending at all, polling every `intervalMs`.
 * Returns early (without error) when `signal` aborts.
 */
export async function waitCaughtUp(
  jsm: JetStreamManager,
  spec: ConsumerSpec,
  targetSeq: number,
  opts: { readonly clock: Clock; readonly intervalMs: number; readonly signal: AbortSignal },
): Promise<void> {
  while (!opts.signal.aborted) {
    const info = await jsm.consumers.info(spec.stream, spec.durable);
    if (info.num_pending + info.num_ack_pending === 0 || info.ack_floor.stream_seq >= targetSeq) return;
    await sleep(opts.clock, opts.intervalMs, opts.signal);
  }
}
