// Acknowledged, idempotent JetStream publishing.
//
// Every publish carries a Nats-Msg-Id, so retrying after a lost ack is safe: the stream drops
// the repeat inside its duplicate window and answers with the first message's sequence.

import { createHash } from 'node:crypto';
import { JetStreamApiError } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamPublishOptions } from '@nats-io/jetstream';
import { errors, headers as natsHeaders } from '@nats-io/transport-node';
import { DEAD_LETTER_MAX_OBJECT_BYTES } from '@slicemesh/contracts';
import type { DeadLetter, DeadLetterBody } from '@slicemesh/contracts';
import { PublishError, WrongLastSequenceError } from './errors.ts';

const WRONG_LAST_SEQUENCE = 10071;

export interface PublishOptions {
  /** Nats-Msg-Id: the idempotency key (watcher: `<cluster>/<uid>/<resourceVersion>`). */
  readonly msgID: string;
  /**
   * Optimistic concurrency: the sequence of the last message on this subject (0 = the subject
   * must be empty). A mismatch throws WrongLastSequenceError and is never retried.
   */
  readonly expectLastSubjectSequence?: number;
  /** Extra headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Wait for each ack, ms. Defaults to 5000. */
  readonly timeoutMs?: number;
  /** Further attempts after a transient failure (ack timeout, no responders). Defaults to 3. */
  readonly retries?: number;
  /** First backoff between attempts, ms; doubles each time up to 2000. Defaults to 100. */
  readonly backoffMs?: number;
}

export interface PublishResult {
  /** Stream sequence of the message (of the original when `duplicate`). */
  readonly seq: number;
  /** True when the stream had already stored this msgID inside its duplicate window. */
  readonly duplicate: boolean;
  readonly stream: string;
}

/**
 * JSON-encodes `payload`, publishes it with `msgID` and waits for the stream's ack. Retries
 * transient failures with doubling backoff. Throws WrongLastSequenceError on an expectation
 * mismatch, PublishError for anything else (including a payload that is not JSON-encodable).
 */
export async function publishAcked(js: JetStreamClient, subject: string, payload: unknown, opts: PublishOptions): Promise<PublishResult> {
  return publishAckedText(js, subject, encodeJson(subject, opts.msgID, payload), opts);
}

/**
 * publishAcked for a message already in its wire form (JSON text a store kept as written, such
 * as the slicer's outbox): published as it is, neither parsed nor encoded again.
 */
export async function publishAckedText(js: JetStreamClient, subject: string, body: string, opts: PublishOptions): Promise<PublishResult> {
  const attempts = 1 + Math.max(0, opts.retries ?? 3);
  let wait = opts.backoffMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      const pubOpts: Partial<JetStreamPublishOptions> = { msgID: opts.msgID, timeout: opts.timeoutMs ?? 5000 };
      if (opts.expectLastSubjectSequence !== undefined) pubOpts.expect = { lastSubjectSequence: opts.expectLastSubjectSequence };
      if (opts.headers) {
        const h = natsHeaders();
        for (const [k, v] of Object.entries(opts.headers)) h.set(k, v);
        pubOpts.headers = h;
      }
      const ack = await js.publish(subject, body, pubOpts);
      return { seq: ack.seq, duplicate: ack.duplicate, stream: ack.stream };
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE) {
        throw new WrongLastSequenceError(subject, opts.msgID, opts.expectLastSubjectSequence ?? -1, err.message, { cause: err });
      }
      const transient = transientReason(err);
      if (transient === undefined) throw new PublishError(subject, opts.msgID, messageOf(err), false, { cause: err });
      if (attempt >= attempts) throw new PublishError(subject, opts.msgID, `${transient} (after ${attempts} attempts)`, true, { cause: err });
      await sleep(wait);
      wait = Math.min(wait * 2, 2000);
    }
  }
}

/** A reason when `err` is worth retrying, undefined otherwise. */
function transientReason(err: unknown): string | undefined {
  if (err instanceof errors.TimeoutError) return 'no ack in time';
  // The client reports "no responders" as a JetStreamNotEnabled error caused by it: no stream
  // captures the subject right now (leader election, stream being created, or a wrong subject).
  const cause = err instanceof Error ? err.cause : undefined;
  if (isNoResponders(err) || isNoResponders(cause)) {
    return 'no stream answered (no responders): does a stream capture this subject?';
  }
  return undefined;
}

function isNoResponders(err: unknown): boolean {
  return err instanceof errors.NoRespondersError || (err instanceof errors.RequestError && err.isNoResponders());
}

function encodeJson(subject: string, msgID: string | undefined, payload: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (err) {
    throw new PublishError(subject, msgID, `payload is not JSON-encodable: ${messageOf(err)}`, false, { cause: err });
  }
  if (text === undefined) throw new PublishError(subject, msgID, 'payload is not JSON-encodable', false);
  return text;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// The dead letter's shape is the DLQ contract's (@slicemesh/contracts).
/**
 * Publishes a dead letter (body: DeadLetterBody) to `subject` (see dlqSubject). Without a
 * `msgID` the id is a hash of subject, reason, field and object, so the same rejection
 * redelivered within the duplicate window is stored once.
 */
export async function publishDeadLetter(
  js: JetStreamClient,
  subject: string,
  letter: DeadLetter,
  opts: Partial<PublishOptions> = {},
): Promise<PublishResult> {
  const { text, bytes, truncated } = truncateUtf8(rawText(letter.object), DEAD_LETTER_MAX_OBJECT_BYTES);
  const body: DeadLetterBody = {
    reason: letter.reason,
    ...(letter.field !== undefined ? { field: letter.field } : {}),
    ...(letter.subject !== undefined ? { subject: letter.subject } : {}),
    at: letter.at ?? new Date().toISOString(),
    object: text,
    objectBytes: bytes,
    truncated,
  };
  const msgID =
    opts.msgID ??
    `dlq/${createHash('sha256')
      .update(JSON.stringify([letter.subject ?? '', letter.reason, letter.field ?? '', text, bytes]))
      .digest('hex')
      .slice(0, 40)}`;
  return publishAcked(js, subject, body, { ...opts, msgID });
}

function rawText(object: unknown): string {
  if (typeof object === 'string') return object;
  if (object instanceof Uint8Array) return new TextDecoder().decode(object);
  try {
    return JSON.stringify(object) ?? String(object);
  } catch {
    return String(object); // cyclic or BigInt: keep what we can
  }
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character. Returns the
 * text, the original size in bytes and whether anything was cut. '' gives { '', 0, false }.
 */
export function truncateUtf8(text: string, maxBytes: number): { readonly text: string; readonly bytes: number; readonly truncated: boolean } {
  const encoded = new TextEncoder().encode(text);
  if (encoded.length <= maxBytes) return { text, bytes: encoded.length, truncated: false };
  let cut = maxBytes;
  while (cut > 0 && ((encoded[cut] ?? 0) & 0xc0) === 0x80) cut--; // never start on a continuation byte
  return { text: new TextDecoder().decode(encoded.subarray(0, cut)), bytes: encoded.length, truncated: true };
}
