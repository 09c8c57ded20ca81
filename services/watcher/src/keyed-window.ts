// Bounded, per-key ordered execution: the publish pipeline of the watcher.
//
// Versions of one object must reach the stream in the order they happened, so tasks of one key
// run one after another. Different objects are independent, so up to `window` of them are in
// flight at once (acks are awaited concurrently: ~5k/s awaited one by one, much more in
// parallel). Keys take turns in arrival order, so one busy object cannot starve the rest.

export interface KeyedWindowOptions {
  /** Most tasks running at once. Must be >= 1. */
  readonly window: number;
  /** Receives what a task threw (the task is then done; the key's next task runs). */
  readonly onError: (err: unknown, key: string) => void;
}

export class KeyedWindow {
  readonly #window: number;
  readonly #onError: (err: unknown, key: string) => void;
  /** Tasks not yet started, per key. A key is present while it has any. */
  readonly #queues = new Map<string, (() => Promise<void>)[]>();
  /** Keys with a running task. */
  readonly #active = new Set<string>();
  /** Keys with queued tasks and none running, in the order they became ready. */
  readonly #ready: string[] = [];
  #running = 0;
  #queued = 0;
  #closed = false;
  #idle: (() => void)[] = [];

  constructor(opts: KeyedWindowOptions) {
    if (!Number.isInteger(opts.window) || opts.window < 1) throw new RangeError(`window must be an integer >= 1, got ${opts.window}`);
    this.#window = opts.window;
    this.#onError = opts.onError;
  }

  /** Tasks queued and not yet started. */
  get queued(): number {
    return this.#queued;
  }

  /** Tasks running now (at most `window`). */
  get running(): number {
    return this.#running;
  }

  /** Queues `task` behind every earlier task of `key`. Ignored after close(). */
  push(key: string, task: () => Promise<void>): void {
    if (this.#closed) return;
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = [];
      this.#queues.set(key, queue);
      if (!this.#active.has(key)) this.#ready.push(key);
    }
    queue.push(task);
    this.#queued++;
    this.#pump();
  }

  /** Resolves once nothing is queued or running (at once when that is already so). */
  idle(): Promise<void> {
    if (this.#running === 0 && this.#queued === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Drops queued tasks, accepts no more, and resolves once the running ones finish. */
  close(): Promise<void> {
    this.#closed = true;
    this.#queued = 0;
    this.#queues.clear();
    this.#ready.length = 0;
    return this.idle();
  }

  #pump(): void {
    while (this.#running < this.#window && this.#ready.length > 0) {
      const key = this.#ready.shift() as string;
      const queue = this.#queues.get(key);
      const task = queue?.shift();
      if (queue === undefined || task === undefined) continue;
      if (queue.length === 0) this.#queues.delete(key);
      this.#queued--;
      this.#running++;
      this.#active.add(key);
      void this.#run(key, task);
    }
    if (this.#running === 0 && this.#queued === 0) {
      const waiters = this.#idle;
      this.#idle = [];
      for (const resolve of waiters) resolve();
    }
  }

  async #run(key: string, task: () => Promise<void>): Promise<void> {
    try {
      await task();
    } catch (err) {
      this.#onError(err, key);
    }
    this.#running--;
    this.#active.delete(key);
    if (this.#queues.has(key)) this.#ready.push(key);
    this.#pump();
  }
}
