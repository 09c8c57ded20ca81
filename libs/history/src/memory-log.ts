// A LogSource over arrays: for tests, the benchmark, and tools that already hold the events.

import type { DeadLetterEntry, LogEvent, LogSettings, LogSnapshot, LogSource, ScheduledReconcile } from './source.ts';
import { EMPTY_SNAPSHOT } from './source.ts';

export interface MemoryLogInput {
  readonly settings: LogSettings;
  /** In sequence order. */
  readonly events: readonly LogEvent[];
  readonly snapshot?: LogSnapshot;
  readonly deadLetters?: readonly DeadLetterEntry[];
  readonly reconciles?: readonly ScheduledReconcile[];
  readonly description?: string;
}

/** A file-like (server-less) LogSource over `input`. Events must be in increasing seq order. */
export function memoryLog(input: MemoryLogInput): LogSource {
  const ev = input.events;
  const lowerBound = (seq: number): number => {
    let lo = 0;
    let hi = ev.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ev[mid] as LogEvent).seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const point = (e: LogEvent) => ({ seq: e.seq, time: e.time });
  return {
    kind: 'file',
    description: input.description ?? 'memory',
    settings: async () => input.settings,
    snapshot: async () => input.snapshot ?? EMPTY_SNAPSHOT,
    bounds: async () => (ev.length === 0 ? null : { first: point(ev[0] as LogEvent), last: point(ev[ev.length - 1] as LogEvent) }),
    eventAtOrAfter: async (seq) => {
      const e = ev[lowerBound(seq)];
      return e === undefined ? null : point(e);
    },
    events: async function* (from, to) {
      for (let i = lowerBound(from); i < ev.length && (ev[i] as LogEvent).seq <= to; i++) yield ev[i] as LogEvent;
    },
    deadLetters: async () => input.deadLetters ?? [],
    reconciles: async () => input.reconciles ?? [],
    points: async () => ev.map(point),
    close: async () => {},
  };
}
