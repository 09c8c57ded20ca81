// The step a service's startup is in (its readiness reason) and how long each step took, so the
// ready log says where a slow start went.

export class StartupSteps {
  readonly #now: () => number;
  readonly #ms: Record<string, number> = {};
  #name: string;
  #at: number;

  constructor(first = 'starting', now: () => number = () => performance.now()) {
    this.#now = now;
    this.#name = first;
    this.#at = now();
  }

  /** The step under way. */
  get current(): string {
    return this.#name;
  }

  /** Ends the step under way and starts `name` (a step entered twice adds up). */
  next(name: string): void {
    const t = this.#now();
    this.#ms[this.#name] = (this.#ms[this.#name] ?? 0) + Math.round(t - this.#at);
    this.#name = name;
    this.#at = t;
  }

  /** Milliseconds per finished step, in the order they were first entered. */
  durations(): Readonly<Record<string, number>> {
    return { ...this.#ms };
  }
}
