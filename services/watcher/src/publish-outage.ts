// Publish failures as an outage, not as a line per message: while KUBE has no leader (a NATS
// server lost, an election under way) every change in the publish window fails and retries, and
// a warning per retry wrote 420-690 lines per lost server in the NATS-cluster fault campaign. The
// first failure of an outage is logged at warn, the rest at debug (the retries metric counts them
// all), and the first success after it once at info with how long it lasted and how many retries
// it took.

import type { Logger } from '@slicemesh/runtime';

export class PublishOutage {
  readonly #log: Logger;
  readonly #now: () => number;
  #since: number | undefined;
  #retries = 0;

  constructor(log: Logger, now: () => number) {
    this.#log = log;
    this.#now = now;
  }

  /** Whether an outage is under way (a failure not yet followed by a success). */
  get failing(): boolean {
    return this.#since !== undefined;
  }

  /** A publish failed and will be retried in `retryInMs`. */
  failed(err: unknown, subject: string, retryInMs: number): void {
    this.#retries++;
    if (this.#since === undefined) {
      this.#since = this.#now();
      this.#log.warn({ err, subject, retryInMs }, 'publishing fails: retrying every change until it works (logged again when it does)');
    } else {
      this.#log.debug({ err, subject, retryInMs }, 'publish failed, retrying');
    }
  }

  /** A publish succeeded: ends an outage under way. */
  succeeded(): void {
    if (this.#since === undefined) return;
    this.#log.info({ outageMs: this.#now() - this.#since, retries: this.#retries }, 'publishing works again');
    this.#since = undefined;
    this.#retries = 0;
  }
}
