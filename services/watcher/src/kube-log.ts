// The KUBE stream as the watcher uses it: publish a change and wait for its ack (only if the
// subject's last message is the one the caller expects), read a subject's last message,
// dead-letter a rejected object, and read back what the stream last recorded for a cluster.
//
// Reading back uses an ephemeral pull consumer with deliver policy `last_per_subject` on
// `kube.<cluster>.>`: one pass over exactly one message per object (its subject), at consumer
// speed, with no extra state to keep in sync (a KV bucket of "last published" would be a second
// record that can disagree with the log). nats-server 2.9 supports it with one filter subject.

import { parseKubeEvent } from '@slicemesh/contracts';
import type { KubeChangeEvent } from '@slicemesh/kube';
import { dlqSubject, encodeToken, forEachLastPerSubject, jetstream, jetstreamManager, kubeEventJson, lastMessageOf, publishAckedText, publishDeadLetter } from '@slicemesh/nats';
import type { DeadLetter, JetStreamManager, NatsConnection, PublishResult, StreamNames } from '@slicemesh/nats';
import type { KubeMessage } from './kube-message.ts';

/** A message KUBE stored for an object: its sequence, and its event unless the body is unreadable. */
export interface StoredKubeEvent {
  readonly subject: string;
  readonly seq: number;
  readonly event?: KubeChangeEvent;
}

/** The stream-facing port of the watcher (watcher.ts); tests substitute an in-memory one. */
export interface KubeLog {
  /**
   * Publishes and resolves once the stream acked (duplicate = the msgID was already stored, and
   * seq is that message's). Stored only when the subject's last sequence is `expectLastSeq` (0:
   * the subject holds nothing), else throws WrongLastSequenceError; a duplicate is answered as
   * one whatever the subject holds.
   */
  publish(msg: KubeMessage, expectLastSeq: number): Promise<PublishResult>;
  /** The last message of `subject`, undefined when KUBE holds none. */
  lastOf(subject: string): Promise<StoredKubeEvent | undefined>;
  /** Stores a rejection under `dlq.<cluster>.watcher`. */
  deadLetter(cluster: string, letter: DeadLetter): Promise<PublishResult>;
  /**
   * The last message per subject recorded for `cluster`, in stream order; bodies that do not
   * parse as KUBE events are passed to `onUnreadable` and come without an event. Empty for a new cluster.
   */
  lastStates(cluster: string, onUnreadable?: (subject: string, reason: string) => void): Promise<readonly StoredKubeEvent[]>;
}


export interface NatsKubeLogOptions {
  /** Ack wait per publish attempt, ms. Defaults to 5000. */
  readonly publishTimeoutMs?: number;
}

/** A KubeLog over `nc`, using the streams in `names` (see ensureStreams). */
export function natsKubeLog(nc: NatsConnection, names: StreamNames, opts: NatsKubeLogOptions = {}): KubeLog {
  const js = jetstream(nc);
  let jsm: Promise<JetStreamManager> | undefined;
  const manager = (): Promise<JetStreamManager> => (jsm ??= jetstreamManager(nc));
  return {
    publish: (msg, expectLastSeq) =>
      publishAckedText(js, msg.subject, kubeEventJson(msg.event), { msgID: msg.msgID, timeoutMs: opts.publishTimeoutMs ?? 5000, expectLastSubjectSequence: expectLastSeq }),
    lastOf: async (subject) => {
      const m = await lastMessageOf(await manager(), names.kube, subject);
      if (m === undefined) return undefined;
      const parsed = parseStoredEvent(m.data);
      return typeof parsed === 'string' ? { subject, seq: m.seq } : { subject, seq: m.seq, event: parsed };
    },
    deadLetter: (cluster, letter) => publishDeadLetter(js, dlqSubject(cluster, 'watcher', names), letter, { timeoutMs: opts.publishTimeoutMs ?? 5000 }),
    lastStates: async (cluster, onUnreadable) => {
      const filter = `${names.prefix}kube.${encodeToken(cluster)}.>`;
      return readLastPerSubject(await manager(), js, names.kube, filter, onUnreadable ?? (() => {}));
    },
  };
}

/** Parses one stored body with the KUBE contract; returns a reason instead when it is not a usable event. */
export function parseStoredEvent(data: Uint8Array): KubeChangeEvent | string {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return 'body is not JSON';
  }
  const parsed = parseKubeEvent(body);
  if (parsed.ok) return parsed.value;
  const { reason, field } = parsed.rejection;
  return field === undefined ? reason : `${field}: ${reason}`;
}

async function readLastPerSubject(
  jsm: JetStreamManager,
  js: ReturnType<typeof jetstream>,
  stream: string,
  filter: string,
  onUnreadable: (subject: string, reason: string) => void,
): Promise<StoredKubeEvent[]> {
  const out: StoredKubeEvent[] = [];
  await forEachLastPerSubject(jsm, js, stream, filter, { headersOnly: false }, (m) => {
    const parsed = parseStoredEvent(m.data);
    if (typeof parsed === 'string') {
      onUnreadable(m.subject, parsed);
      out.push({ subject: m.subject, seq: m.seq });
    } else out.push({ subject: m.subject, seq: m.seq, event: parsed });
  });
  return out;
}
