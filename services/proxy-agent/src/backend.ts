// The port a sync applies through (habit 12): one method, the state to reach and what changed.
// Implementations live in ./backends and use @slicemesh/netfilter adapters.

import type { DpState } from '@slicemesh/dataplane';
import type { BackendKind } from './config.ts';

export interface BackendSyncRequest {
  readonly state: DpState;
  /**
   * `<ns>/<name>` of the services whose spec or endpoints changed since the last successful
   * sync; null asks for a full sync (rewrite everything, remove whatever is stale).
   */
  readonly changedServices: ReadonlySet<string> | null;
}

export interface BackendSyncResult {
  /** What was actually done: a backend may do a full sync although a partial one was allowed. */
  readonly mode: 'full' | 'partial';
  /** Object counts after the sync, for the backend's rule-count gauge (labels → value). */
  readonly counts: Readonly<Record<string, number>>;
  /** Extra fields for the sync log line. */
  readonly detail?: Readonly<Record<string, unknown>>;
}

export interface Backend {
  readonly kind: BackendKind;
  /**
   * Brings the data plane to `state`. On failure it throws (an ApplyError carries the
   * failing lines) after forgetting what it believed was applied, so the next call — which
   * the syncer makes with `changedServices: null` — starts from what the kernel holds.
   */
  sync(req: BackendSyncRequest): Promise<BackendSyncResult>;
  /** Releases what the backend holds open (the userspace proxies' sockets and helper); the agent's close() calls it. */
  close?(): Promise<void>;
}
