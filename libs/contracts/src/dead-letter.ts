// The DLQ stream's message: input a service rejected, with the reason and the field, kept so a
// person can see what was refused and why (subject: dlq.<cluster>.<service>).

/** Largest `object` text kept in a dead letter, in UTF-8 bytes. */
export const DEAD_LETTER_MAX_OBJECT_BYTES = 64 * 1024;

export interface DeadLetter {
  /** Why the input was rejected (e.g. an InvalidObjectError message). */
  readonly reason: string;
  /** JSON path of the offending field, when known. */
  readonly field?: string;
  /** The rejected input: raw text or bytes as received, or a value (stored as its JSON text). */
  readonly object: unknown;
  /** Subject of the rejected message, when it came from NATS. */
  readonly subject?: string;
  /** RFC 3339 time of rejection. Defaults to the current time. */
  readonly at?: string;
}

/** The stored body of a dead letter. */
export interface DeadLetterBody {
  readonly reason: string;
  readonly field?: string;
  readonly subject?: string;
  readonly at: string;
  /** The input as text, cut to DEAD_LETTER_MAX_OBJECT_BYTES at a character boundary. */
  readonly object: string;
  /** UTF-8 size of the whole text before cutting. */
  readonly objectBytes: number;
  readonly truncated: boolean;
}
