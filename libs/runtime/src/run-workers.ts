// The controller worker loop (habit 3): reconcile a key, then act on the explicit outcome.
import { isTerminal } from './errors.ts';
import type { WorkQueue } from './work-queue.ts';

/** What a reconcile may ask for. Returning nothing means "done, forget the key". */
export interface ReconcileResult {
  /** Reconcile the key again after this many ms (e.g. a hint re-check). Ignored unless > 0. */
  readonly requeueAfterMs?: number;
}

/** What happened to a key whose reconcile threw. */
export type ReconcileErrorOutcome =
  /** Retried with backoff (`addRateLimited`). */
  | 'requeued'
  /** Given up after `maxRetries` requeues; forgotten until an event adds it again. */
  | 'dropped'
  /** A TerminalError: forgotten without retry. */
  | 'terminal';

/** A typed status report; the service decides how to log or count it. */
export interface ReconcileErrorReport<K> {
  readonly key: K;
  readonly error: unknown;
  readonly outcome: ReconcileErrorOutcome;
  /** `numRequeues(key)` when the error happened (0 on the first attempt). */
  readonly retries: number;
}

/** Options for `runWorkers`. */
export interface RunWorkersOptions<K> {
  /** Requeues allowed before a key is dropped. Defaults to 15 (semantics A.12.4). */
  readonly maxRetries?: number;
  /** Called for every failed reconcile. Must not throw. */
  readonly onError?: (report: ReconcileErrorReport<K>) => void;
}

/**
 * Runs `n` workers, each taking one key at a time from `queue` until it is shut down and
 * drained. Per reconcile:
 * - success: forget the key's backoff; if `requeueAfterMs > 0`, also `addAfter` it;
 * - TerminalError (anywhere in the cause chain): forget, report `terminal`;
 * - any other error: `addRateLimited` while `numRequeues < maxRetries` (report `requeued`),
 *   else forget and report `dropped`.
 * Resolves when every worker has exited (immediately for n <= 0).
 *
 * ### Examples
 * ```ts
 * const workers = runWorkers(queue, 5, (key) => reconcileService(key), { onError: (r) => log.error(r) });
 * // on shutdown:
 * queue.shutDown();
 * await workers;
 * ```
 */
export async function runWorkers<K>(
  queue: WorkQueue<K>,
  n: number,
  reconcile: (key: K) => Promise<ReconcileResult | void>,
  options: RunWorkersOptions<K> = {},
): Promise<void> {
  const maxRetries = options.maxRetries ?? 15;
  const report = options.onError ?? (() => {});

  async function processOne(key: K): Promise<void> {
    try {
      const result = await reconcile(key);
      queue.forget(key);
      const after = result?.requeueAfterMs;
      if (after !== undefined && after > 0) queue.addAfter(key, after);
    } catch (error) {
      const retries = queue.numRequeues(key);
      if (isTerminal(error)) {
        queue.forget(key);
        report({ key, error, outcome: 'terminal', retries });
      } else if (retries < maxRetries) {
        queue.addRateLimited(key);
        report({ key, error, outcome: 'requeued', retries });
      } else {
        queue.forget(key);
        report({ key, error, outcome: 'dropped', retries });
      }
    } finally {
      queue.done(key);
    }
  }

  async function worker(): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) await processOne(key);
  }

  const workers: Promise<void>[] = [];
  for (let i = 0; i < n; i++) workers.push(worker());
  await Promise.all(workers);
}
