// Carrying out the actions of one batch against the API (habit 1: decide.ts plans, this
// executes thinly). Each action is decided against the object the server holds right now,
// never against what an earlier run believed, which is what makes replays and redeliveries
// harmless: an action already applied decides `skip-equal`, `skip-gone` or `delete` of what is
// still there.
//
// Outcomes of the API's answers:
// - 409 on create (AlreadyExists), on replace (stale resourceVersion) or on delete (failed
//   precondition), 404 on replace, and a slice of ours still terminating: read again and
//   decide again, with a short backoff, at most `maxConflicts` times; then the batch fails
//   and is retried from the recorded offset;
// - 422 Invalid and other client errors: terminal for that slice — reported with the API's
//   message and left; retrying would only get the same answer;
// - no response, 429, 5xx, 401/403: the request is retried after Retry-After when the server
//   sent one, else with exponential backoff, until it succeeds or the publisher stops (an
//   unreachable or forbidding API server must hold the offset back, not skip slices).

import type { EndpointSliceApi, KubeJson } from '@slicemesh/kube';
import type { OwnManagers } from '@slicemesh/nats';
import { KubeWriteError } from '@slicemesh/kube';
import type { Clock } from '@slicemesh/runtime';
import { TokenBucket, exponentialBackoff } from '@slicemesh/runtime';
import type { Decision, DecisionKind, SliceAction } from './decide.ts';
import { decide } from './decide.ts';

export const PUBLISHER_MODES = ['shadow', 'write'] as const;
export type PublisherMode = (typeof PUBLISHER_MODES)[number];

/** What became of one action. */
export type Outcome =
  | 'created' | 'updated' | 'deleted'
  | 'unchanged' | 'foreign' | 'gone' | 'not-owned'
  /** 422: the API refused the object (apiMessage says why). */
  | 'invalid'
  /** Another client error (400, 404 on create: the namespace is gone, 413, …). */
  | 'rejected'
  /** shadow mode: what write mode would have done. */
  | 'would-create' | 'would-update' | 'would-delete';

export interface ActionResult {
  readonly action: SliceAction;
  readonly outcome: Outcome;
  /** The last decision taken. */
  readonly decision: DecisionKind;
  /** Re-reads after a 409/404/terminating answer. */
  readonly conflicts: number;
  /** For invalid and rejected: the API's answer. */
  readonly error?: KubeWriteError;
}

/** Something the caller may count or log while actions run. */
export type ApplyEvent =
  | { readonly type: 'conflict'; readonly action: SliceAction; readonly decision: DecisionKind; readonly statusCode: number; readonly attempt: number }
  | { readonly type: 'retry'; readonly verb: string; readonly statusCode: number; readonly waitMs: number; readonly attempt: number; readonly message: string };

/** Thrown when a slice kept conflicting: the batch is retried later from the recorded offset. */
export class ConflictsExhaustedError extends Error {
  readonly action: SliceAction;
  override readonly name = 'ConflictsExhaustedError';
  constructor(action: SliceAction, attempts: number) {
    super(`${action.type} ${action.namespace}/${action.name}: still conflicting after ${attempts} attempts`);
    this.action = action;
  }
}

/** Thrown when the publisher stops while a request waits for its retry. */
export class StoppedError extends Error {
  override readonly name = 'StoppedError';
  constructor() {
    super('publisher stopped');
  }
}

export interface ApplyDeps {
  /** Rate-limited already (rateLimitedApi). */
  readonly api: EndpointSliceApi;
  /** Managed-by values this publisher owns. */
  readonly owned: OwnManagers;
  readonly mode: PublisherMode;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Re-reads allowed per action after conflicts. Defaults to 8. */
  readonly maxConflicts?: number;
  /** Delay before re-read number `attempt` (0-based). Defaults to 10 ms doubling to 1 s. */
  readonly conflictDelayMs?: (attempt: number) => number;
  /** Delay before retry `attempt` of a request without Retry-After. Defaults to 200 ms doubling to 30 s. */
  readonly retryDelayMs?: (attempt: number) => number;
  /** Actions applied at once. Defaults to 4. */
  readonly concurrency?: number;
  /**
   * A namespace with at least this many actions in one call of applyActions is read with one
   * paged list instead of a GET per slice (a catch-up after a restart touches many slices). 0
   * turns it off. Defaults to 16.
   */
  readonly listThreshold?: number;
  /** Items per list page. Defaults to 500 (as client-go's pager). */
  readonly listPageSize?: number;
  readonly onEvent?: (e: ApplyEvent) => void;
}

const defaultConflictDelay = exponentialBackoff({ baseMs: 10, maxMs: 1000 });
const defaultRetryDelay = exponentialBackoff({ baseMs: 200, maxMs: 30_000 });

/** Resolves after `ms` on `clock`; rejects with StoppedError when `signal` aborts. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new StoppedError());
    const onAbort = (): void => {
      clock.clearTimer(timer);
      reject(new StoppedError());
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A list is only an optimisation: without permission to list, the slices are read one by one instead. */
function isTransientForList(err: unknown): err is KubeWriteError {
  return isTransient(err) && err.statusCode !== 401 && err.statusCode !== 403;
}

/** Errors worth repeating the same request for: no answer, throttling, server trouble, missing permission. */
export function isTransient(err: unknown): err is KubeWriteError {
  if (!(err instanceof KubeWriteError)) return false;
  const s = err.statusCode;
  return s === 0 || s === 429 || s >= 500 || s === 401 || s === 403;
}

async function withRetries<T>(deps: ApplyDeps, verb: string, call: () => Promise<T>, transient: (err: unknown) => err is KubeWriteError = isTransient): Promise<T> {
  const delay = deps.retryDelayMs ?? defaultRetryDelay;
  for (let attempt = 0; ; attempt++) {
    if (deps.signal?.aborted) throw new StoppedError();
    try {
      return await call();
    } catch (err) {
      if (!transient(err)) throw err;
      const waitMs = err.retryAfterMs ?? delay(attempt);
      deps.onEvent?.({ type: 'retry', verb, statusCode: err.statusCode, waitMs, attempt, message: err.message });
      await sleepOn(deps.clock, waitMs, deps.signal);
    }
  }
}

const SHADOW: Partial<Record<DecisionKind, Outcome>> = { create: 'would-create', update: 'would-update', delete: 'would-delete' };
const SKIPS: Partial<Record<DecisionKind, Outcome>> = { 'skip-equal': 'unchanged', 'skip-foreign': 'foreign', 'skip-gone': 'gone', 'skip-not-owned': 'not-owned' };

/** Executes the write of `d`; returns its outcome, or 'again' when it must be decided anew. */
async function write(deps: ApplyDeps, action: SliceAction, d: Decision): Promise<Outcome | { again: number }> {
  const { api } = deps;
  try {
    switch (d.kind) {
      case 'create':
        await withRetries(deps, 'create', () => api.create(d.body));
        return 'created';
      case 'update':
        await withRetries(deps, 'replace', () => api.replace(d.body));
        return 'updated';
      case 'delete':
        await withRetries(deps, 'delete', () => api.delete(action.namespace, action.name, { uid: d.uid, resourceVersion: d.resourceVersion }));
        return 'deleted';
      case 'wait-terminating':
        return { again: 409 };
      case 'skip-equal':
      case 'skip-foreign':
      case 'skip-gone':
      case 'skip-not-owned':
        return SKIPS[d.kind] as Outcome;
      default: {
        const unknown: never = d;
        throw new Error(`unknown decision ${JSON.stringify(unknown)}`);
      }
    }
  } catch (err) {
    if (!(err instanceof KubeWriteError)) throw err;
    if (err.statusCode === 409) return { again: 409 };
    if (d.kind === 'update' && err.statusCode === 404) return { again: 404 };
    if (d.kind === 'delete' && err.statusCode === 404) return 'gone';
    throw err;
  }
}

/** What a list read of the action's namespace found: the live object, or undefined when absent. */
export interface Prefetched {
  readonly live: KubeJson | undefined;
}

/**
 * Applies one action until it reaches an outcome; throws ConflictsExhaustedError, StoppedError,
 * or a non-API error. `prefetched` stands in for the first read; every read after a conflict
 * is a GET.
 */
export async function applyAction(deps: ApplyDeps, action: SliceAction, prefetched?: Prefetched): Promise<ActionResult> {
  const maxConflicts = deps.maxConflicts ?? 8;
  const conflictDelay = deps.conflictDelayMs ?? defaultConflictDelay;
  for (let conflicts = 0; ; conflicts++) {
    let decision: DecisionKind = 'skip-gone';
    try {
      const live: KubeJson | undefined =
        conflicts === 0 && prefetched !== undefined ? prefetched.live : await withRetries(deps, 'get', () => deps.api.get(action.namespace, action.name));
      const d = decide(action, live, deps.owned);
      decision = d.kind;
      if (deps.mode === 'shadow') return { action, outcome: SHADOW[d.kind] ?? SKIPS[d.kind] ?? 'unchanged', decision, conflicts };
      const r = await write(deps, action, d);
      if (typeof r === 'string') return { action, outcome: r, decision, conflicts };
      deps.onEvent?.({ type: 'conflict', action, decision, statusCode: r.again, attempt: conflicts });
    } catch (err) {
      if (!(err instanceof KubeWriteError)) throw err;
      return { action, outcome: err.statusCode === 422 ? 'invalid' : 'rejected', decision, conflicts, error: err };
    }
    if (conflicts + 1 >= maxConflicts) throw new ConflictsExhaustedError(action, conflicts + 1);
    await sleepOn(deps.clock, conflictDelay(conflicts), deps.signal);
  }
}

const nameOf = (o: KubeJson): string => {
  const meta = o['metadata'];
  return typeof meta === 'object' && meta !== null && typeof (meta as Record<string, unknown>)['name'] === 'string' ? ((meta as Record<string, unknown>)['name'] as string) : '';
};

/**
 * The live slices of each namespace with at least `listThreshold` actions, read with one paged
 * list (no answer, 429 and 5xx retried like any request). A namespace whose list fails otherwise
 * (410 on an expired continue token, 401/403 without permission to list) is left out: its
 * actions read with GETs.
 */
async function prefetch(deps: ApplyDeps, actions: readonly SliceAction[]): Promise<Map<string, Map<string, KubeJson>>> {
  const threshold = deps.listThreshold ?? 16;
  const out = new Map<string, Map<string, KubeJson>>();
  if (threshold <= 0) return out;
  const perNamespace = new Map<string, number>();
  for (const a of actions) perNamespace.set(a.namespace, (perNamespace.get(a.namespace) ?? 0) + 1);
  for (const [ns, n] of perNamespace) {
    if (n < threshold) continue;
    const live = new Map<string, KubeJson>();
    try {
      let token = '';
      do {
        const page = await withRetries(deps, 'list', () => deps.api.list(ns, deps.listPageSize ?? 500, token), isTransientForList);
        for (const o of page.items) live.set(nameOf(o), o);
        token = page.continue;
      } while (token !== '');
      out.set(ns, live);
    } catch (err) {
      if (!(err instanceof KubeWriteError)) throw err;
    }
  }
  return out;
}

/**
 * Applies every action, `concurrency` at a time (actions are on distinct slices, so their
 * order does not matter). Namespaces with many actions are read with one list first (see
 * `listThreshold`). Resolves with one result per action in the given order; rejects with the
 * first error once the actions already started have finished.
 */
export async function applyActions(deps: ApplyDeps, actions: readonly SliceAction[]): Promise<ActionResult[]> {
  const listed = await prefetch(deps, actions);
  const results: ActionResult[] = new Array<ActionResult>(actions.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < actions.length) {
      const i = next++;
      const action = actions[i] as SliceAction;
      const inNamespace = listed.get(action.namespace);
      try {
        results[i] = await applyAction(deps, action, inNamespace === undefined ? undefined : { live: inNamespace.get(action.name) });
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(deps.concurrency ?? 4, actions.length)) }, worker));
  if (failure !== undefined) throw failure.err;
  return results;
}

export interface RateLimitOptions {
  /** Sustained requests per second (kube-controller-manager's --kube-api-qps). */
  readonly qps: number;
  /** Requests allowed at once above the sustained rate (--kube-api-burst). */
  readonly burst: number;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Called with each wait the limit imposed, ms (> 0 only). */
  readonly onWait?: (ms: number) => void;
}

/** A wait for one token of a bucket of `burst` tokens refilled at `qps` per second. */
export function rateGate(opts: RateLimitOptions): () => Promise<void> {
  const bucket = new TokenBucket({ everyMs: 1000 / opts.qps, burst: opts.burst, clock: opts.clock });
  return async () => {
    const ms = bucket.reserve();
    if (ms <= 0) return;
    opts.onWait?.(ms);
    await sleepOn(opts.clock, ms, opts.signal);
  };
}

/**
 * `api` with every request (reads too, as client-go's client-side limiter does) first taking a
 * token from a bucket of `burst` tokens refilled at `qps` per second.
 */
export function rateLimitedApi(api: EndpointSliceApi, opts: RateLimitOptions): EndpointSliceApi {
  const gate = rateGate(opts);
  return {
    async get(ns, name) {
      await gate();
      return api.get(ns, name);
    },
    async list(ns, limit, continueToken) {
      await gate();
      return api.list(ns, limit, continueToken);
    },
    async create(slice) {
      await gate();
      return api.create(slice);
    },
    async replace(slice) {
      await gate();
      return api.replace(slice);
    },
    async delete(ns, name, pre) {
      await gate();
      return api.delete(ns, name, pre);
    },
  };
}
