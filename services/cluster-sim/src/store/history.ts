// A bounded history of committed events for one kind: what a watch started at an older
// resourceVersion replays. Once an event falls out, watches from before it get 410 Gone.
import type { StoreEvent } from './types.ts';

export class EventHistory {
  readonly #capacity: number;
  readonly #ring: (StoreEvent | undefined)[];
  #start = 0;
  #size = 0;
  // Highest resourceVersion whose event is no longer retained (evicted or compacted).
  #floor = 0;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, Math.floor(capacity));
    this.#ring = new Array<StoreEvent | undefined>(this.#capacity);
  }

  get size(): number {
    return this.#size;
  }

  /** A watch from `rv` can be served iff rv >= floor: every later event is still here. */
  get floor(): number {
    return this.#floor;
  }

  push(event: StoreEvent): void {
    if (this.#size === this.#capacity) {
      const evicted = this.#ring[this.#start]!;
      this.#floor = evicted.rv;
      this.#ring[this.#start] = event;
      this.#start = (this.#start + 1) % this.#capacity;
      return;
    }
    this.#ring[(this.#start + this.#size) % this.#capacity] = event;
    this.#size++;
  }

  #at(i: number): StoreEvent {
    return this.#ring[(this.#start + i) % this.#capacity]!;
  }

  /** Retained events with rv > `rv`, oldest first. Callers check `floor` first. */
  since(rv: number): StoreEvent[] {
    // Events are in rv order: binary search for the first one after rv.
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#at(mid).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    const out: StoreEvent[] = [];
    for (let i = lo; i < this.#size; i++) out.push(this.#at(i));
    return out;
  }

  /** Forgets everything up to and including `rv` (the store's current version). */
  compact(rv: number): void {
    this.#ring.fill(undefined);
    this.#start = 0;
    this.#size = 0;
    this.#floor = Math.max(this.#floor, rv);
  }
}
