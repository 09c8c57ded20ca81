// Typed errors of the NATS adapter. Callers branch on the class, never on message text.

// The token errors belong to the subject contract; re-exported so callers keep one import.
export { TokenDecodeError, TokenEncodeError } from '@slicemesh/contracts';

/** The server could not be reached on the first attempt (later outages reconnect forever). */
export class NatsUnreachableError extends Error {
  readonly url: string;
  readonly reason: string;
  readonly hint: string;
  override readonly name: string = 'NatsUnreachableError';
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

/** Why the server cannot hold a stream or bucket with the replicas asked for. */
export type ReplicasProblem = 'not-clustered' | 'too-few-servers' | 'not-updatable';

/**
 * A stream or KV bucket cannot be created or updated with NATS_REPLICAS replicas: the server is
 * not clustered, the cluster has fewer servers up than replicas, or the server cannot change the
 * count in place. The message says what to do; a service refuses to start with it.
 */
export class ReplicasUnavailableError extends Error {
  readonly stream: string;
  readonly wanted: number;
  readonly existing: number | undefined;
  readonly problem: ReplicasProblem;
  /** The server's own description. */
  readonly serverReason: string;
  override readonly name = 'ReplicasUnavailableError';
  constructor(stream: string, wanted: number, existing: number | undefined, problem: ReplicasProblem, serverReason: string, options?: ErrorOptions) {
    const what = existing === undefined ? `creating stream ${stream}` : `updating stream ${stream} from ${existing} to ${wanted} replicas`;
    const advice =
      problem === 'not-clustered'
        ? `NATS_REPLICAS=${wanted} needs a JetStream cluster of at least ${wanted} servers; this server is not clustered (${what}: ${serverReason}). Set NATS_REPLICAS=1 (--nats-replicas 1), or list the servers of a cluster in NATS_URL`
        : problem === 'too-few-servers'
          ? `NATS_REPLICAS=${wanted} needs at least ${wanted} JetStream servers up in the cluster, and the cluster cannot place that many (${what}: ${serverReason}). Set NATS_REPLICAS to at most the number of servers (3 survives the loss of one), or start the missing servers`
          : `the server cannot change the replicas of stream ${stream} in place (${what}: ${serverReason}). Set NATS_REPLICAS=${existing ?? 1} to keep it, or recreate the stream (see docs/operations.md, "NATS cluster")`;
    super(advice, options);
    this.stream = stream;
    this.wanted = wanted;
    this.existing = existing;
    this.problem = problem;
    this.serverReason = serverReason;
  }
}

/**
 * The server refused the connection's credentials (or their absence) on the first attempt. A
 * NatsUnreachableError, as callers already handle, whose advice is about credentials: starting
 * the server is no help.
 */
export class NatsAuthorizationError extends NatsUnreachableError {
  override readonly name: string = 'NatsAuthorizationError';
  /** `credentials`: the setting and file used (never the secret), undefined when none was given. */
  constructor(url: string, reason: string, credentials: string | undefined, options?: ErrorOptions) {
    const advice =
      credentials === undefined
        ? "the server wants credentials: give this role's nkey seed file (NATS_NKEY_SEED_FILE) or a .creds file (NATS_CREDS_FILE)"
        : `the server refused the credentials of ${credentials}: is its public key in the server's authorization block?`;
    super(url, reason, advice, options);
    this.message = `NATS not reachable at ${url}: ${reason} — ${advice}`;
  }
}
