// Which dead letters can be put back on their subject (`log dlq redrive`), decided before any
// publish: only a letter that came from a stream (it names its subject), whose kept text is the
// whole message (not cut at the size limit) and is JSON, as every stream body here is.

import type { DeadLetterEntry } from './source.ts';

export type RedriveStep =
  | { readonly seq: number; readonly redrive: true; readonly subject: string; readonly body: unknown }
  | { readonly seq: number; readonly redrive: false; readonly why: string };

/** One step per letter, in the given order. */
export function redrivePlan(letters: readonly DeadLetterEntry[]): RedriveStep[] {
  return letters.map((l): RedriveStep => {
    const b = l.body;
    if (b.subject === undefined || b.subject === '') {
      return { seq: l.seq, redrive: false, why: `it was rejected before it reached a stream (by the ${l.stage}); fix the object at its source and it is sent again` };
    }
    if (b.truncated) return { seq: l.seq, redrive: false, why: `only the first ${b.object.length} characters of its ${b.objectBytes} bytes were kept` };
    try {
      return { seq: l.seq, redrive: true, subject: b.subject, body: JSON.parse(b.object) as unknown };
    } catch {
      return { seq: l.seq, redrive: false, why: 'its kept body is not JSON, so no consumer would accept it' };
    }
  });
}
