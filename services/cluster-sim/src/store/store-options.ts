// Options and results of ObjectStore operations.
import type { Clock } from '../time/clock.ts';
import type { ApiError } from './api-error.ts';
import type { KindInfo } from './kinds.ts';
import type { KubeObj, StoreEvent } from './types.ts';

/** Upstream's --event-ttl default: an Event is deleted one hour after its last write. */
export const DEFAULT_EVENT_TTL_MS = 60 * 60 * 1000;

export interface StoreOptions {
  /** Epoch milliseconds for timestamps. */
  readonly now: () => number;
  /** Seeds uids and generated names. Defaults to `cluster-sim`. */
  readonly seed?: string;
  /** Events retained per kind for watches from an older resourceVersion. Defaults to 10000. */
  readonly historySize?: number;
  readonly serviceCIDR?: string;
  readonly nodePortRange?: readonly [number, number];
  /** Grace period for pods that do not set one; upstream uses 30, the simulator 0. */
  readonly defaultPodGraceSeconds?: number;
  /** Namespaces that exist from the start. Defaults to DEFAULT_NAMESPACES. */
  readonly namespaces?: readonly string[];
  /** Called when a watcher callback throws (the store itself carries on). */
  readonly onWatcherError?: (err: unknown) => void;
  /**
   * Milliseconds after its last write an object of a kind is deleted (a DELETED event, as an
   * etcd lease expiry gives). Defaults to `{ Event: DEFAULT_EVENT_TTL_MS }`; 0 keeps forever.
   */
  readonly ttlMs?: Readonly<Record<string, number>>;
  /** Timers (on the same time line as `now`) that expire objects when due. Without them only
   *  `expireDue()` does. */
  readonly timers?: Pick<Clock, 'setTimer' | 'clearTimer'>;
}

export interface WriteOptions {
  /** Validate and compute the result, but store nothing (`?dryRun=All`). */
  readonly dryRun?: boolean;
  /** The resource the write came through when it is a view of the kind (events.k8s.io/v1
   *  Events): validation follows that API and errors name it. */
  readonly as?: KindInfo;
}

export interface CreateOptions extends WriteOptions {
  /** Drop the submitted status first, as API creates of pods, services and namespaces do. */
  readonly resetStatus?: boolean;
}

/** `all` writes every field (in-process controllers); `main` keeps the stored status of kinds
 *  with a status subresource (PUT on the resource); `status` changes only the status. */
export type UpdateScope = 'all' | 'main' | 'status';

export interface UpdateOptions extends WriteOptions {
  readonly scope?: UpdateScope;
}

export interface DeleteOptions extends WriteOptions {
  /** Pods only: seconds until the pod is gone; 0 removes it at once. */
  readonly gracePeriodSeconds?: number;
  readonly preconditions?: { readonly uid?: string; readonly resourceVersion?: string };
}

export interface DeleteResult {
  /** The removed object (with the deletion's resourceVersion), or the pod now terminating. */
  readonly object: KubeObj;
  readonly removed: boolean;
}

export interface Watcher {
  onEvent(event: StoreEvent): void;
  /** The history this watcher relies on was compacted away; it is unsubscribed. */
  onExpired?(err: ApiError): void;
}
