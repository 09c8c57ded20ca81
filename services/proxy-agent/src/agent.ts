// The agent's event side: two watches — the cluster's service specs, and exactly ONE wildcard
// of views, its zone's (`<cluster>.<zone>.>`, UNZONED_VIEW for a node without a zone) — feed
// the ViewState. Nothing is programmed until both initial sets have arrived (habit 5); from
// then on every real change asks the runner for a sync, which coalesces them (habit 6).
//
// The zone can change while the agent runs (moveTo: its Node was relabelled). The views watch
// then moves: the new zone's initial set is held back until it is complete and replaces the old
// zone's entries in one synchronous step, so no sync ever sees a half-loaded or empty view; the
// old zone's rules stay programmed until the new ones are in.

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
  /**
   * The view this node reads: its zone, or UNZONED_VIEW; null while the zone is not known yet
   * (the views watch waits for moveTo). `state` is made for it when it is not null.
   */
  readonly view: string | null;
  readonly state: ViewState;
  readonly runner: SyncRunner;
  readonly services: KvChangeSource;
  readonly views: KvChangeSource;
  readonly clock: Clock;
  readonly log: Logger;
  /** Delay before re-watching after a watch failed, by attempt. Defaults to 1 s doubling to 30 s. */
  readonly restartDelay?: (attempt: number) => number;
  /**
   * Told, synchronously and before the runner is asked for a sync, when the entries of another
   * view have replaced the previous ones (`previous` null: the first view loaded this way);
   * `entries` counts the new view's keys. The node's zone for endpoint selection follows here.
   */
  readonly onViewLoaded?: (view: string, previous: string | null, entries: number) => void;
}

type Bucket = 'svc' | 'views';

export class ProxyAgent {
  readonly #o: ProxyAgentOptions;
  readonly #initialDone: Record<Bucket, boolean> = { svc: false, views: false };
  #started = false;
  /** The view to watch; null until known. */
  #wantView: string | null;
  /** The view whose entries the state holds (null: none loaded through a move yet). */
  #loadedView: string | null;
  /** Ends the running views watch (or its back-off) when the view to watch changes. */
  #viewWatch: AbortController | null = null;
  #wakeViews: (() => void) | null = null;

  constructor(opts: ProxyAgentOptions) {
    this.#o = opts;
    this.#wantView = opts.view;
    this.#loadedView = opts.view;
  }

  /** The filters the agent watches: every service of its cluster, and its one view. */
  get filters(): Readonly<Record<Bucket, string>> {
    return { svc: svcClusterFilter(this.#o.cluster), views: zoneViewsFilter(this.#o.cluster, this.#wantView ?? this.#o.state.view) };
  }

  /** True once both initial sets have arrived and the runner was started. */
  get initialized(): boolean {
    return this.#started;
  }

  /** The view the agent watches or is about to watch; null while its zone is not known. */
  get view(): string | null {
    return this.#wantView;
  }

  /** The view whose entries are loaded (and programmed once initialized); null before the first. */
  get loadedView(): string | null {
    return this.#loadedView;
  }

  /**
   * Reads `view` from now on: the running views watch ends and one of `view` starts. The old
   * view's entries stay until the new view's initial set is complete (see the file comment).
   * Moving to the view already wanted does nothing.
   */
  moveTo(view: string): void {
    if (view === this.#wantView) return;
    this.#wantView = view;
    this.#viewWatch?.abort();
    this.#wakeViews?.();
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
    this.#bucketReady(bucket, dropped);
  }

  #bucketReady(bucket: Bucket, changed: boolean): void {
    this.#initialDone[bucket] = true;
    if (this.#started) {
      if (changed) this.#o.runner.run();
      return;
    }
    if (this.#initialDone.svc && this.#initialDone.views) {
      this.#started = true;
      this.#o.log.info({ services: this.#o.state.serviceKeys().length }, 'initial state received; programming rules');
      this.#o.runner.start();
      this.#o.runner.run();
    }
  }

  /**
   * The complete initial set of `view`, held back while watching it: replaces the previous
   * view's entries in one step and asks for a sync.
   */
  #viewLoaded(view: string, initial: ReadonlyMap<string, KvChange>): void {
    const previous = this.#loadedView;
    const outcomes = this.#o.state.replaceViews(view, [...initial.values()]);
    for (const o of outcomes) if (o.kind === 'rejected') this.#o.log.warn({ reason: o.reason }, 'ignored an invalid views entry');
    this.#loadedView = view;
    this.#o.onViewLoaded?.(view, previous, initial.size);
    this.#bucketReady('views', true);
  }

  /** Runs both watches until `signal` aborts, re-watching after failures. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([this.#watchLoop('svc', this.#o.services, signal), this.#viewsLoop(signal)]);
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

  /**
   * The views watch, following #wantView. Watching the view already loaded (a re-watch) works
   * like the svc watch; watching another one (a move, or the first view when the zone was not
   * known at start) holds the initial set back until it is complete (#viewLoaded).
   */
  async #viewsLoop(signal: AbortSignal): Promise<void> {
    const delay = this.#o.restartDelay ?? exponentialBackoff({ baseMs: 1000, maxMs: 30_000 });
    let attempt = 0;
    while (!signal.aborted) {
      const view = this.#wantView;
      if (view === null) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            signal.removeEventListener('abort', wake);
            this.#wakeViews = null;
            resolve();
          };
          this.#wakeViews = wake;
          signal.addEventListener('abort', wake, { once: true });
        });
        continue;
      }
      // Ends with the agent, or as soon as the view to watch changes (moveTo).
      const watch = new AbortController();
      const stop = () => watch.abort();
      signal.addEventListener('abort', stop, { once: true });
      this.#viewWatch = watch;
      const filter = zoneViewsFilter(this.#o.cluster, view);
      const staged = view !== this.#loadedView;
      const initialSet = new Map<string, KvChange>();
      let initial = true;
      try {
        const onInitialDone = () => {
          initial = false;
          if (watch.signal.aborted) return;
          if (staged) this.#viewLoaded(view, initialSet);
          else this.initialDone('views', new Set(initialSet.keys()));
        };
        for await (const change of this.#o.views.watch(filter, { onInitialDone, signal: watch.signal })) {
          if (watch.signal.aborted) break;
          if (initial) initialSet.set(change.key, change);
          if (!initial || !staged) this.handle('views', change);
          if (!initial) attempt = 0;
        }
        if (!watch.signal.aborted) this.#o.log.warn({ subject: filter }, 'views watch ended; watching again');
      } catch (err) {
        if (!watch.signal.aborted) this.#o.log.warn({ err, subject: filter }, 'views watch failed; watching again');
      } finally {
        signal.removeEventListener('abort', stop);
      }
      if (signal.aborted) return;
      if (this.#wantView !== view) {
        attempt = 0; // moved: watch the new view at once
        continue;
      }
      // The back-off ends early too when the view to watch changes.
      const pause = new AbortController();
      this.#viewWatch = pause;
      await this.#sleep(delay(attempt++), AbortSignal.any([signal, pause.signal]));
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
