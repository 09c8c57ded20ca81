// A pause for the engine's writers: ingest batches and reconcile batches each pass the gate
// (enter/leave); a snapshot closes it, waits until no batch is in flight, fixes its view, and
// opens it again. Batches wait at the gate only while a snapshot fixes its view (a few ms).

export class Gate {
  #active = 0;
  #closed: Promise<void> | undefined;
  #idle: (() => void)[] = [];

  /** Waits while the gate is closed, then counts the caller in. */
  async enter(): Promise<void> {
    while (this.#closed !== undefined) await this.#closed;
    this.#active++;
  }

  leave(): void {
    this.#active--;
    if (this.#active === 0) for (const f of this.#idle.splice(0)) f();
  }

  /** Closes the gate, waits for the batches inside, runs `fn`, and opens the gate again. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#closed !== undefined) await this.#closed;
    let open: () => void = () => {};
    this.#closed = new Promise<void>((r) => (open = r));
    try {
      if (this.#active > 0) await new Promise<void>((r) => this.#idle.push(r));
      return await fn();
    } finally {
      this.#closed = undefined;
      open();
    }
  }
}
