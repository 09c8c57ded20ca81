// Typed errors of the NATS adapter. Callers branch on the class, never on message text.

// The token errors belong to the subject contract; re-exported so callers keep one import.
export { TokenDecodeError, TokenEncodeError } from '@slicemesh/contracts';

/** The server could not be reached on the first attempt (later outages reconnect forever). */
export class NatsUnreachableError extends Error {
  readonly url: string;
  readonly reason: string;
  readonly hint: string;
  override readonly name = 'NatsUnreachableError';
  constructor(
    url: string,
    reason: string,
    hint: string,
    options?: ErrorOptions,
  ) {
    super(`NATS not reachable at ${url}: ${reason} — start it with: ${hint}`, options);
    this.url = url;
    this.reason = reason;
    this.hint = hint;
  }
}

/** A publish the server refused or that kept failing after its retries. */
export class PublishError extends Error {
  readonly subject: string;
  readonly msgID: string | undefined;
  readonly reason: string;
  /** True when the last failure was transient (timeout, no responders) and retries ran out. */
  readonly retriesExhausted: boolean;
  override readonly name: string = 'PublishError';
  constructor(
    subject: string,
    msgID: string | undefined,
    reason: string,
    retriesExhausted: boolean,
    options?: ErrorOptions,
  ) {
    super(`publish to ${subject}${msgID ? ` (msgID ${msgID})` : ''} failed: ${reason}`, options);
    this.subject = subject;
    this.msgID = msgID;
    this.reason = reason;
    this.retriesExhausted = retriesExhausted;
  }
}

/** `expectLastSubjectSequence` did not match: someone else appended first (JetStream API error 10071). */
export class WrongLastSequenceError extends PublishError {
  readonly expected: number;
  override readonly name = 'WrongLastSequenceError';
  constructor(
    subject: string,
    msgID: string | undefined,
    expected: number,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(subject, msgID, reason, false, options);
    this.expected = expected;
  }
}

/** An existing durable consumer whose immutable settings differ from the requested ones. */
export class ConsumerConflictError extends Error {
  readonly stream: string;
  readonly durable: string;
  readonly field: string;
  readonly existing: unknown;
  readonly wanted: unknown;
  override readonly name = 'ConsumerConflictError';
  constructor(
    stream: string,
    durable: string,
    field: string,
    existing: unknown,
    wanted: unknown,
  ) {
    super(`consumer ${stream}/${durable} exists with ${field}=${JSON.stringify(existing)}, wanted ${JSON.stringify(wanted)}; delete it to change this`);
    this.stream = stream;
    this.durable = durable;
    this.field = field;
    this.existing = existing;
    this.wanted = wanted;
  }
}

/** An existing stream whose immutable settings (e.g. storage) differ from the requested ones. */
export class StreamConflictError extends Error {
  readonly stream: string;
  readonly field: string;
  readonly existing: unknown;
  readonly wanted: unknown;
  override readonly name = 'StreamConflictError';
  constructor(
    stream: string,
    field: string,
    existing: unknown,
    wanted: unknown,
  ) {
    super(`stream ${stream} exists with ${field}=${JSON.stringify(existing)}, wanted ${JSON.stringify(wanted)}; it cannot be changed in place`);
    this.stream = stream;
    this.field = field;
    this.existing = existing;
    this.wanted = wanted;
  }
}
