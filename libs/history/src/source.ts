// What the history engine reads: a log of KUBE events with the settings the controllers ran
// with, optionally starting from a snapshot. Two adapters implement it: the .slog file
// (log-file.ts) and the live streams (openLiveLog in @slicemesh/cli, over @slicemesh/nats and
// @slicemesh/db). Everything else in this library only sees this interface.

import type { EndpointSlice, Endpoints, Node, Pod, Service } from '@slicemesh/model';
import { DEFAULT_MAX_ENDPOINTS_PER_SLICE, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import type { DeadLetterBody } from '@slicemesh/contracts';

/** A place in the log: a KUBE stream sequence and the time the stream stored it. */
export interface LogPoint {
  readonly seq: number;
  /** RFC 3339. */
  readonly time: string;
}

/** One KUBE message as stored: the subject and body are decoded by the engine, as the slicer does. */
export interface LogEvent {
  readonly seq: number;
  /** RFC 3339: when the stream stored it. */
  readonly time: string;
  readonly subject: string;
  /** Parsed JSON body; undefined with parseError when the body was not JSON. */
  readonly data: unknown;
  readonly parseError?: string;
}

/** The settings the controllers ran with; a replay uses the same ones. */
export interface LogSettings {
  readonly cluster: string;
  /** Stream subject prefix (e.g. `stage.`), '' for none. */
  readonly prefix: string;
  /** KUBE partitions, when known (only used to name subjects; decoding accepts any). */
  readonly partitions?: number;
  /** The slicer's managed-by label value. Example: `endpointslice-controller.k8s.io`. */
  readonly managedBy: string;
  readonly maxEndpointsPerSlice: number;
  /** The PreferSameTrafficDistribution gate the hints service and agents use. */
  readonly preferSameTrafficDistribution: boolean;
}

/** Settings with every default filled in; `cluster` is required. */
export function logSettings(partial: Partial<LogSettings> & { readonly cluster: string }): LogSettings {
  return {
    prefix: '',
    managedBy: MANAGED_BY_CONTROLLER,
    maxEndpointsPerSlice: DEFAULT_MAX_ENDPOINTS_PER_SLICE,
    preferSameTrafficDistribution: true,
    ...partial,
  };
}

/** One object version kept in a snapshot; deleted ones are tombstones (a stale copy stays out). */
export interface SnapshotObject {
  readonly deleted: boolean;
  readonly object: Service | Pod | Node | Endpoints | EndpointSlice;
}

/**
 * The replayed state just after `seq` (0: the empty cluster): every object version the log held,
 * and the slices the slicer had written by then (slicing depends on the slices that exist, so a
 * later replay must start from the same ones).
 */
export interface LogSnapshot {
  readonly seq: number;
  /** RFC 3339 of `seq`'s event; '' for the empty snapshot. */
  readonly time: string;
  readonly objects: readonly SnapshotObject[];
  readonly slices: readonly EndpointSlice[];
}

export const EMPTY_SNAPSHOT: LogSnapshot = Object.freeze({ seq: 0, time: '', objects: [], slices: [] });

/** One message of the DLQ stream. */
export interface DeadLetterEntry {
  readonly seq: number;
  readonly time: string;
  /** `dlq.<cluster>.<service>` (with the prefix). */
  readonly subject: string;
  /** The stage that rejected it: `watcher`, `slicer`, `hints`. */
  readonly stage: string;
  readonly body: DeadLetterBody;
}

/**
 * One reconcile the live slicer made: the Service, and the KUBE point its view reached
 * (max of its partition and node offsets). Replaying with these reconciles each Service when
 * live did, so slices that depend on history (placement, names) come out as live had them.
 */
export interface ScheduledReconcile {
  readonly seq: number;
  /** `ns/name`. */
  readonly service: string;
}

/** A log of one cluster. Sequences grow; they need not be contiguous (other clusters share a stream). */
export interface LogSource {
  /** `file` or `live`: what the CLI prints in its headers. */
  readonly kind: 'file' | 'live';
  /** Where it comes from: the file path, or the stream name and server. */
  readonly description: string;
  settings(): Promise<LogSettings>;
  /** The snapshot the log starts from: EMPTY_SNAPSHOT for a live log kept from the beginning. */
  snapshot(): Promise<LogSnapshot>;
  /** The first and last event; null when the log holds none. */
  bounds(): Promise<{ readonly first: LogPoint; readonly last: LogPoint } | null>;
  /** The first event with seq ≥ `seq`; null when there is none. */
  eventAtOrAfter(seq: number): Promise<LogPoint | null>;
  /** Events with from ≤ seq ≤ to, in sequence order. */
  events(from: number, to: number): AsyncIterable<LogEvent>;
  /** The dead letters of the cluster, oldest first. */
  deadLetters(): Promise<readonly DeadLetterEntry[]>;
  /** The slicer's recorded reconciles in KUBE order; [] when unknown (then batches go by log time). */
  reconciles(): Promise<readonly ScheduledReconcile[]>;
  /** Optional: every event's point without reading bodies (files have them indexed); timeline uses it. */
  points?(): Promise<readonly LogPoint[]>;
  close(): Promise<void>;
}
