// The agent's event side: two watches — the cluster's service specs, and exactly ONE wildcard
// of views, its zone's (`<cluster>.<zone>.>`, UNZONED_VIEW for a node without a zone) — feed
// the ViewState. Nothing is programmed until both initial sets have arrived (habit 5); from
// then on every real change asks the runner for a sync, which coalesces them (habit 6).

import type { KvChange } from '@slicemesh/nats';
import { svcClusterFilter, zoneViewsFilter } from '@slicemesh/nats';
import type { Clock, Logger } from '@slicemesh/runtime';
import { exponentialBackoff } from '@slicemesh/runtime';
import type { ViewState } from './view-state.ts';

/** The smallest view of a KV bucket the agent needs (kvWatchJson satisfies it). */
export interface KvChangeSource {
  /**
   * Yields the current values of keys matching `filter` (deleted ones as DEL), then every
   * change; calls `onInitialDone` once, after the last current value was handled (at once
   * when none match). Ends when `signal` aborts.
   */
  watch(filter: string, opts: { readonly onInitialDone: () => void; readonly signal: AbortSignal }): AsyncIterable<KvChange>;
}

/** The part of BoundedFrequencyRunner the agent drives. */
export interface SyncRunner {
  start(): void;
  run(): void;
}

export interface ProxyAgentOptions {
  readonly cluster: string;
  /** The view this node reads: its zone, or UNZONED_VIEW. */
  readonly view: string;
  readonly state: ViewState;
  readonly runner: SyncRunner;
  readonly services: KvChangeSource;
  readonly views: KvChangeSource;
  readonly clock: Clock;
  readonly log: Logger;
  /** Delay before re-watching after a watch failed, by attempt. Defaults to 1 s doubling to 30 s. */
  readonly restartDelay?: (attempt: number) => number;
}

type Bucket = 'svc' | 'views';

export class ProxyAgent {
  readonly #o: ProxyAgentOptions;
  readonly #initialDone: Record<Bucket, boolean> = { svc: false, views: false };
  #started = false;

  constructor(opts: ProxyAgentOptions) {
    this.#o = opts;
  }

  /** The filters the agent watches: every service of its cluster, and its one view. */
  get filters(): Readonly<Record<Bucket, string>> {
    return { svc: svcClusterFilter(this.#o.cluster), views: zoneViewsFilter(this.#o.cluster, this.#o.view) };
  }

  /** True once both initial sets have arrived and the runner was started. */
  get initialized(): boolean {
    return this.#started;
  }

  /** Applies one entry; wakes the runner for a real change once initialized. */
  handle(bucket: Bucket, change: KvChange): void {
    const outcome = bucket === 'svc' ? this.#o.state.applyService(change) : this.#o.state.applyView(change);
    if (outcome.kind === 'rejected') this.#o.log.warn({ key: change.key, reason: outcome.reason }, `ignored an invalid ${bucket} entry`);
    else if (outcome.kind === 'changed' && this.#started) this.#o.runner.run();
  }

  /**
   * A watch of `bucket` delivered its initial set, whose keys are `seen`: what is not among
   * them is gone (this matters after a re-watch). Once both buckets are done, the runner
   * starts and the first sync is asked for.
   */
  initialDone(bucket: Bucket, seen: ReadonlySet<string>): void {
    const dropped = this.#o.state.retainOnly(bucket, seen).some((o) => o.kind === 'changed');
    this.#initialDone[bucket] = true;
    if (this.#started) {
      if (dropped) this.#o.runner.run();
      return;
    }
    if (this.#initialDone.svc && this.#initialDone.views) {
      this.#started = true;
      this.#o.log.info({ services: this.#o.state.serviceKeys().length }, 'initial state received; programming rules');
      this.#o.runner.start();
      this.#o.runner.run();
    }
  }

  /** Runs both watches until `signal` aborts, re-watching after failures. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([this.#watchLoop('svc', this.#o.services, signal), this.#watchLoop('views', this.#o.views, signal)]);
  }

  async #watchLoop(bucket: Bucket, source: KvChangeSource, signal: AbortSignal): Promise<void> {
    const delay = this.#o.restartDelay ?? exponentialBackoff({ baseMs: 1000, maxMs: 30_000 });
    const filter = this.filters[bucket];
    for (let attempt = 0; !signal.aborted; attempt++) {
      const seen = new Set<string>();
      let initial = true;
      try {
        const onInitialDone = () => {
          initial = false;
          this.initialDone(bucket, seen);
        };
        for await (const change of source.watch(filter, { onInitialDone, signal })) {
          if (initial) seen.add(change.key);
          this.handle(bucket, change);
          if (!initial) attempt = 0;
        }
        if (signal.aborted) return;
        this.#o.log.warn({ subject: filter }, `${bucket} watch ended; watching again`);
      } catch (err) {
        if (signal.aborted) return;
        this.#o.log.warn({ err, subject: filter }, `${bucket} watch failed; watching again`);
      }
      await this.#sleep(delay(attempt), signal);
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#o.clock.clearTimer(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.#o.clock.setTimer(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
