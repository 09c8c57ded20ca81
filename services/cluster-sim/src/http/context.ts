// What every handler needs: the store, the clock, logger and metrics, and watch settings.
import type { ServerResponse } from 'node:http';
import type { Log } from '../log.ts';
import type { SimMetrics } from '../metrics.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../time/clock.ts';

export interface HandlerContext {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly log: Log;
  /** Period of BOOKMARK events for watches that allow them. */
  readonly bookmarkIntervalMs: number;
  /** Upper bound on any watch's lifetime (0 = none); clients resume from their last version. */
  readonly maxWatchSeconds: number;
  /** Open watch responses, ended on shutdown. */
  readonly openWatches: Set<ServerResponse>;
  readonly metrics: SimMetrics;
}
