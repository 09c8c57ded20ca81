// Writing one correlated event to the API (A.13.4), thinly (habit 1): a patch that finds the
// Event gone (expired, deleted) becomes a create of the same event; no answer, 429 and 5xx are
// retried after Retry-After or with backoff, at most `maxTries` times in all (client-go: 12);
// any other error status is final. Events are best effort, so giving up drops the event and
// the writer moves on.

import type { CoreEventApi } from '@slicemesh/kube';
import { KubeWriteError } from '@slicemesh/kube';
import type { Clock } from '@slicemesh/runtime';
import { exponentialBackoff } from '@slicemesh/runtime';
import { isTransient, sleepOn } from '../apply.ts';
import type { Correlation } from './correlator.ts';
import { eventObject, eventPatch } from './event-body.ts';

/** What became of one correlated event. */
export type RecordOutcome =
  | 'created' | 'patched'
  /** A patch found no Event, so it was created again. */
  | 'recreated'
  /** The API refused it (409 AlreadyExists, 422, 403 after the retries, …): dropped. */
  | 'refused'
  /** Still no answer, or still 429/5xx, after maxTries: dropped. */
  | 'gave-up';

export interface RecordDeps {
  /** Rate-limited already. */
  readonly api: CoreEventApi;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Tries per event in all. Defaults to 12 (client-go's maxTriesPerEvent). */
  readonly maxTries?: number;
  /** Delay before retry `attempt` without Retry-After. Defaults to 200 ms doubling to 10 s. */
  readonly retryDelayMs?: (attempt: number) => number;
  readonly onRetry?: (e: { readonly verb: string; readonly statusCode: number; readonly waitMs: number; readonly attempt: number; readonly message: string }) => void;
}

const defaultRetryDelay = exponentialBackoff({ baseMs: 200, maxMs: 10_000 });

export interface RecordResult {
  readonly outcome: RecordOutcome;
  /** For refused and gave-up: the last error. */
  readonly error?: KubeWriteError;
}

/** Writes a create or patch correlation; throws only StoppedError (the writer is closing). */
export async function recordEvent(deps: RecordDeps, c: Exclude<Correlation, { action: 'drop' }>): Promise<RecordResult> {
  const maxTries = deps.maxTries ?? 12;
  const delay = deps.retryDelayMs ?? defaultRetryDelay;
  const e = c.event;
  let patching = c.action === 'patch';
  for (let attempt = 0; ; attempt++) {
    const verb = patching ? 'patch' : 'create';
    try {
      if (patching) {
        if ((await deps.api.patch(e.namespace, e.name, eventPatch(e))) !== undefined) return { outcome: 'patched' };
        // Gone (its TTL ran out): record it anew, under the same name, with the count so far.
        patching = false;
        await deps.api.create(e.namespace, eventObject(e));
        return { outcome: 'recreated' };
      }
      await deps.api.create(e.namespace, eventObject(e));
      return { outcome: c.action === 'patch' ? 'recreated' : 'created' };
    } catch (err) {
      if (!(err instanceof KubeWriteError)) throw err;
      if (!isTransient(err)) return { outcome: 'refused', error: err };
      if (attempt + 1 >= maxTries) return { outcome: 'gave-up', error: err };
      const waitMs = err.retryAfterMs ?? delay(attempt);
      deps.onRetry?.({ verb, statusCode: err.statusCode, waitMs, attempt, message: err.message });
      await sleepOn(deps.clock, waitMs, deps.signal);
    }
  }
}
