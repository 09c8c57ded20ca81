// The KUBE stream as the watcher uses it: publish a change and wait for its ack, dead-letter a
// rejected object, and read back what the stream last recorded for a cluster.
//
// Reading back uses an ephemeral pull consumer with deliver policy `last_per_subject` on
// `kube.<cluster>.>`: one pass over exactly one message per object (its subject), at consumer
// speed, with no extra state to keep in sync (a KV bucket of "last published" would be a second
// record that can disagree with the log). nats-server 2.9 supports it with one filter subject.

import { parseKubeEvent } from '@slicemesh/contracts';
import type { KubeChangeEvent } from '@slicemesh/kube';
import { dlqSubject, encodeToken, forEachLastPerSubject, jetstream, jetstreamManager, publishAcked, publishDeadLetter } from '@slicemesh/nats';
import type { DeadLetter, JetStreamManager, NatsConnection, PublishResult, StreamNames } from '@slicemesh/nats';
import type { KubeMessage } from './kube-message.ts';

/** The stream-facing port of the watcher (watcher.ts); tests substitute an in-memory one. */
export interface KubeLog {
  /** Publishes and resolves once the stream acked (duplicate = the msgID was already stored). */
  publish(msg: KubeMessage): Promise<PublishResult>;
  /** Stores a rejection under `dlq.<cluster>.watcher`. */
  deadLetter(cluster: string, letter: DeadLetter): Promise<PublishResult>;
  /**
   * The last event per subject recorded for `cluster`, in stream order; entries that do not
   * parse as KUBE events are passed to `onUnreadable` and left out. Empty for a new cluster.
   */
  lastStates(cluster: string, onUnreadable?: (subject: string, reason: string) => void): Promise<readonly KubeChangeEvent[]>;
}


export interface NatsKubeLogOptions {
  /** Ack wait per publish attempt, ms. Defaults to 5000. */
  readonly publishTimeoutMs?: number;
}

/** A KubeLog over `nc`, using the streams in `names` (see ensureStreams). */
export function natsKubeLog(nc: NatsConnection, names: StreamNames, opts: NatsKubeLogOptions = {}): KubeLog {
  const js = jetstream(nc);
  let jsm: Promise<JetStreamManager> | undefined;
  return {
    publish: (msg) => publishAcked(js, msg.subject, msg.event, { msgID: msg.msgID, timeoutMs: opts.publishTimeoutMs ?? 5000 }),
    deadLetter: (cluster, letter) => publishDeadLetter(js, dlqSubject(cluster, 'watcher', names), letter, { timeoutMs: opts.publishTimeoutMs ?? 5000 }),
    lastStates: async (cluster, onUnreadable) => {
      jsm ??= jetstreamManager(nc);
      const filter = `${names.prefix}kube.${encodeToken(cluster)}.>`;
      return readLastPerSubject(await jsm, js, names.kube, filter, onUnreadable ?? (() => {}));
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
): Promise<KubeChangeEvent[]> {
  const out: KubeChangeEvent[] = [];
  await forEachLastPerSubject(jsm, js, stream, filter, { headersOnly: false }, (m) => {
    const parsed = parseStoredEvent(m.data);
    if (typeof parsed === 'string') onUnreadable(m.subject, parsed);
    else out.push(parsed);
  });
  return out;
}
