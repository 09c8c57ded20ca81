// Declaring the streams and KV buckets of the backbone. Every function is idempotent: run it at
// every start; it creates what is missing and updates what drifted.

import { JetStreamApiError, RetentionPolicy, StorageType, DiscardPolicy } from '@nats-io/jetstream';
import type { JetStreamManager, StreamConfig, StreamInfo } from '@nats-io/jetstream';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import { nanos } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { StreamConflictError } from './errors.ts';
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
  /** Defaults to 1. */
  readonly replicas?: number;
}

const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;
const STREAM_NOT_FOUND = 10059;
const STREAM_NAME_IN_USE = 10058;

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
    num_replicas: opts.replicas ?? 1,
    max_age: nanos(opts.maxAgeMs ?? 0),
    duplicate_window: nanos(opts.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS),
  };
  const kube = await ensureStream(jsm, { ...base, name: names.kube, subjects: [subjects.kube] });
  const slices = await ensureStream(jsm, { ...base, name: names.slices, subjects: [subjects.slices] });
  const dlq = await ensureStream(jsm, { ...base, name: names.dlq, subjects: [subjects.dlq] });
  if (names.events === undefined) return { kube, slices, dlq };
  const events = await ensureStream(jsm, { ...base, name: names.events, subjects: [eventsStreamSubject(names)] });
  return { kube, slices, dlq, events };
}

type EnsuredConfig = Pick<StreamConfig, 'name' | 'subjects' | 'retention' | 'storage' | 'discard' | 'num_replicas' | 'max_age' | 'duplicate_window'>;

async function ensureStream(jsm: JetStreamManager, want: EnsuredConfig): Promise<StreamInfo> {
  let info: StreamInfo;
  try {
    info = await jsm.streams.info(want.name);
  } catch (err) {
    if (!isApiError(err, STREAM_NOT_FOUND)) throw err;
    try {
      return await jsm.streams.add(want);
    } catch (addErr) {
      // Another process created it between our info and add: fall through to compare.
      if (!isApiError(addErr, STREAM_NAME_IN_USE)) throw addErr;
      info = await jsm.streams.info(want.name);
    }
  }
  const have = info.config;
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
  return jsm.streams.update(want.name, { ...have, ...mutable });
}

export interface KvBucketOptions {
  /** Values kept per key. Defaults to 1 (only the current value). */
  readonly history?: number;
  /** Defaults to 'file'. */
  readonly storage?: 'file' | 'memory';
  /** Defaults to 1. */
  readonly replicas?: number;
}

/**
 * Creates the bucket if missing (or opens it) and returns it; if it exists with another
 * history, updates the history in place. Used for `svc` and `views`.
 */
export async function ensureKv(nc: NatsConnection, bucket: string, opts: KvBucketOptions = {}): Promise<KV> {
  const history = opts.history ?? 1;
  const kv = await new Kvm(nc).create(bucket, {
    history,
    storage: opts.storage === 'memory' ? StorageType.Memory : StorageType.File,
    replicas: opts.replicas ?? 1,
  });
  const status = await kv.status();
  if (status.history !== history) {
    const jsm = await jetstreamManager(nc);
    const stream = status.streamInfo.config.name;
    await jsm.streams.update(stream, { ...status.streamInfo.config, max_msgs_per_subject: history });
  }
  return kv;
}

/** True when `err` is a JetStream API error with the given error code (`err_code`). */
export function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}
