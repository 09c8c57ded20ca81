// Declaring the streams and KV buckets of the backbone. Every function is idempotent: run it at
// every start; it creates what is missing and updates what drifted.

import { JetStreamApiError, RetentionPolicy, StorageType, DiscardPolicy } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import { jetstreamManager } from './js-domain.ts';
import type { KV } from '@nats-io/kv';
import { kvmAt } from './kv.ts';
import { nanos } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { ReplicasUnavailableError, StreamConflictError } from './errors.ts';
import type { ReplicasProblem } from './errors.ts';
import { eventsStreamSubject, streamSubjects } from '@slicemesh/contracts';

/** Stream names and the subject prefix. Tests make unique ones (testing/jetstream.ts). */
export interface StreamNames {
  readonly kube: string;
  readonly slices: string;
  readonly dlq: string;
  /**
   * The EVENTS stream (event requests for the publisher's event writer), default `EVENTS`.
   * Optional so that a caller that never touches events need not name it; ensureStreams
   * declares the stream only when it is named.
   */
  readonly events?: string;
  /** See SubjectOptions.prefix. */
  readonly prefix: string;
}

/** KV bucket names. */
export interface BucketNames {
  readonly svc: string;
  readonly views: string;
  /** The hints service's finished slices, which the publisher writes to the API. */
  readonly hinted: string;
}

/** Everything a deployment (or a test) names. Pass it wherever SubjectOptions is wanted. */
export type BackboneNames = StreamNames & BucketNames;

/** The production names. */
export const DEFAULT_NAMES: BackboneNames = Object.freeze({ kube: 'KUBE', slices: 'SLICES', dlq: 'DLQ', events: 'EVENTS', prefix: '', svc: 'svc', views: 'views', hinted: 'hinted' });

export interface StreamOptions {
  /** Window in which a repeated Nats-Msg-Id is dropped as a duplicate, ms. Defaults to 120_000. */
  readonly duplicateWindowMs?: number;
  /** Age after which messages are removed, ms; 0 keeps them forever. Defaults to 0. Must be 0 or >= duplicateWindowMs. */
  readonly maxAgeMs?: number;
  /** Defaults to 'file'. Cannot change on an existing stream (StreamConflictError). */
  readonly storage?: 'file' | 'memory';
  /**
   * Replicas of each stream (NATS_REPLICAS). An existing stream with another count is updated to
   * it (a cluster can change it in place); ReplicasUnavailableError when the server cannot hold
   * that many. Unset: a new stream gets 1 and an existing one keeps its count, so a service
   * started without the setting never takes a replicated stream back to one copy.
   */
  readonly replicas?: number;
  /** Told when an existing stream's replica count is changed. */
  readonly onReplicasChanged?: (change: ReplicasChange) => void;
}

/** An existing stream (or a bucket's stream) whose replica count ensureStreams/ensureKv changed. */
export interface ReplicasChange {
  readonly stream: string;
  readonly from: number;
  readonly to: number;
}

const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;
/** JetStream API error code: stream not found. */
export const STREAM_NOT_FOUND = 10059;
const STREAM_NAME_IN_USE = 10058;
/** JetStream API error code: another stream already holds these subjects (a bucket created at the same moment). */
const STREAM_SUBJECT_OVERLAP = 10065;

/**
 * Creates or updates KUBE, SLICES, DLQ and, when `names.events` is set, EVENTS (names and subject
 * prefix from `names`) with limits retention, discard old, and the options above (the same for
 * all of them). Returns their info.
 * Throws StreamConflictError when an existing stream differs in storage or retention.
 */
export async function ensureStreams(
  jsm: JetStreamManager,
  names: StreamNames,
  opts: StreamOptions = {},
): Promise<{ readonly kube: StreamInfo; readonly slices: StreamInfo; readonly dlq: StreamInfo; readonly events?: StreamInfo }> {
  const subjects = streamSubjects(names);
  const base = {
    retention: RetentionPolicy.Limits,
    storage: opts.storage === 'memory' ? StorageType.Memory : StorageType.File,
    discard: DiscardPolicy.Old,
    num_replicas: opts.replicas ?? 0,
    max_age: nanos(opts.maxAgeMs ?? 0),
    duplicate_window: nanos(opts.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS),
  };
  const changed = opts.onReplicasChanged;
  const kube = await ensureStream(jsm, { ...base, name: names.kube, subjects: [subjects.kube] }, changed);
  const slices = await ensureStream(jsm, { ...base, name: names.slices, subjects: [subjects.slices] }, changed);
  const dlq = await ensureStream(jsm, { ...base, name: names.dlq, subjects: [subjects.dlq] }, changed);
  if (names.events === undefined) return { kube, slices, dlq };
  const events = await ensureStream(jsm, { ...base, name: names.events, subjects: [eventsStreamSubject(names)] }, changed);
  return { kube, slices, dlq, events };
}

type EnsuredConfig = Pick<StreamConfig, 'name' | 'subjects' | 'retention' | 'storage' | 'discard' | 'num_replicas' | 'max_age' | 'duplicate_window'>;

/** `want.num_replicas` 0 means "not set": 1 for a new stream, the existing count otherwise. */
async function ensureStream(jsm: JetStreamManager, wanted: EnsuredConfig, onReplicasChanged?: (change: ReplicasChange) => void): Promise<StreamInfo> {
  let info: StreamInfo;
  let want = wanted;
  try {
    info = await jsm.streams.info(want.name);
  } catch (err) {
    if (!isApiError(err, STREAM_NOT_FOUND)) throw err;
    want = { ...wanted, num_replicas: wanted.num_replicas || 1 };
    try {
      return await jsm.streams.add(want);
    } catch (addErr) {
      throwIfReplicasProblem(addErr, want.name, want.num_replicas, undefined);
      // Another process created it between our info and add: fall through to compare.
      if (!isApiError(addErr, STREAM_NAME_IN_USE)) throw addErr;
      info = await jsm.streams.info(want.name);
    }
  }
  const have = info.config;
  if (want.num_replicas === 0) want = { ...want, num_replicas: have.num_replicas };
  refuseUnclustered(info, want.num_replicas);
  for (const field of ['storage', 'retention'] as const) {
    if (have[field] !== want[field]) throw new StreamConflictError(want.name, field, have[field], want[field]);
  }
  const drifted =
    [...have.subjects].sort().join(' ') !== [...want.subjects].sort().join(' ') ||
    have.discard !== want.discard ||
    have.num_replicas !== want.num_replicas ||
    have.max_age !== want.max_age ||
    have.duplicate_window !== want.duplicate_window;
  if (!drifted) return info;
  const { name: _name, storage: _storage, retention: _retention, ...mutable } = want;
  const updated = await updateStream(jsm, want.name, { ...have, ...mutable }, have.num_replicas);
  if (have.num_replicas !== want.num_replicas) onReplicasChanged?.({ stream: want.name, from: have.num_replicas, to: want.num_replicas });
  return updated;
}

/** jsm.streams.update, with a replicas problem turned into ReplicasUnavailableError. */
async function updateStream(jsm: JetStreamManager, name: string, config: StreamConfig, existingReplicas: number): Promise<StreamInfo> {
  try {
    return await jsm.streams.update(name, config);
  } catch (err) {
    throwIfReplicasProblem(err, name, config.num_replicas, existingReplicas);
    throw err;
  }
}

// JetStream API error codes (nats-server errors.json) that mean "cannot hold that many replicas".
const REPLICAS_PROBLEMS: ReadonlyMap<number, ReplicasProblem> = new Map([
  [10074, 'not-clustered'], // replicas > 1 not supported in non-clustered mode
  [10023, 'too-few-servers'], // insufficient resources
  [10005, 'too-few-servers'], // no suitable peers for placement
  [10061, 'not-updatable'], // replicas configuration can not be updated
]);

/**
 * A server that is not part of a cluster reports no `cluster` in stream info, and nats-server
 * 2.9 accepts an update to num_replicas 3 there (stored, never replicated): refuse before it.
 * (Creating a stream with more than one replica is refused by the server itself, code 10074.)
 */
function refuseUnclustered(info: StreamInfo, wanted: number): void {
  if (wanted <= 1 || (info.cluster?.name ?? '') !== '') return;
  throw new ReplicasUnavailableError(info.config.name, wanted, info.config.num_replicas, 'not-clustered', 'its stream info names no cluster');
}

function throwIfReplicasProblem(err: unknown, stream: string, wanted: number, existing: number | undefined): void {
  if (!(err instanceof JetStreamApiError)) return;
  let problem = REPLICAS_PROBLEMS.get(err.code);
  // A single server names the replicas in its text under other codes in some versions.
  if (problem === undefined && wanted > 1 && /non-clustered/i.test(err.message)) problem = 'not-clustered';
  if (problem === undefined || wanted === existing) return;
  throw new ReplicasUnavailableError(stream, wanted, existing, problem, err.message, { cause: err });
}

export interface KvBucketOptions {
  /** Values kept per key. Defaults to 1 (only the current value). */
  readonly history?: number;
  /** Defaults to 'file'. */
  readonly storage?: 'file' | 'memory';
  /** Replicas of the bucket's stream (NATS_REPLICAS); unset: 1 for a new bucket, an existing one keeps its count (see StreamOptions.replicas). */
  readonly replicas?: number;
  /** Told when an existing bucket's replica count is changed. */
  readonly onReplicasChanged?: (change: ReplicasChange) => void;
  /** JetStream domain of the bucket (e.g. a hub's, reached through a leafnode); unset: the server's own. */
  readonly domain?: string;
}

/**
 * Creates the bucket if missing (or opens it) and returns it; if it exists with another
 * history or replica count, updates them in place (ReplicasUnavailableError when the server
 * cannot hold that many replicas). Used for `svc`, `views` and `hinted`.
 */
export async function ensureKv(nc: NatsConnection, bucket: string, opts: KvBucketOptions = {}): Promise<KV> {
  const history = opts.history ?? 1;
  let replicas = opts.replicas ?? 1;
  let kv: KV;
  const create = () =>
    kvmAt(nc, opts.domain === undefined ? {} : { domain: opts.domain }).create(bucket, {
      history,
      storage: opts.storage === 'memory' ? StorageType.Memory : StorageType.File,
      replicas,
    });
  try {
    kv = await create();
  } catch (err) {
    throwIfReplicasProblem(err, `KV_${bucket}`, replicas, undefined);
    // Another process created it between the client's lookup and its add (two replicas starting
    // together): the server answers with one of these; the second try binds to that bucket.
    if (!isApiError(err, STREAM_NAME_IN_USE) && !isApiError(err, STREAM_SUBJECT_OVERLAP)) throw err;
    kv = await create();
  }
  // Kvm.create binds to an existing bucket as it is: compare and update here.
  const status = await kv.status();
  const have = status.streamInfo.config;
  if (opts.replicas === undefined) replicas = have.num_replicas;
  refuseUnclustered(status.streamInfo, replicas);
  if (status.history !== history || have.num_replicas !== replicas) {
    const jsm = await jetstreamManager(nc, opts.domain === undefined ? {} : { domain: opts.domain });
    await updateStream(jsm, have.name, { ...have, max_msgs_per_subject: history, num_replicas: replicas }, have.num_replicas);
    if (have.num_replicas !== replicas) opts.onReplicasChanged?.({ stream: have.name, from: have.num_replicas, to: replicas });
  }
  return kv;
}

/** True when `err` is a JetStream API error with the given error code (`err_code`). */
export function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}
