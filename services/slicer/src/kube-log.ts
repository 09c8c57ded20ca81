// Reading a slice of the KUBE log back (for the replay check): an ordered, ephemeral consumer
// over one filter, from the first message up to a sequence.

import type { JetStreamClient } from '@slicemesh/nats';
import { DeliverPolicy, encodeToken, kubePartitionFilter } from '@slicemesh/nats';
import type { SubjectOptions } from '@slicemesh/nats';

/** One KUBE message as read back. */
export interface LogMessage {
  readonly seq: number;
  readonly subject: string;
  /** Parsed JSON; undefined with parseError when the body is not JSON. */
  readonly data: unknown;
  readonly parseError?: string;
}

/** Filter for the Services, Pods and Endpoints of one namespace: `kube.<cluster>.<part>.*.<ns>.>`. */
export function kubeNamespaceFilter(cluster: string, partition: number, namespace: string, opts?: SubjectOptions): string {
  return `${kubePartitionFilter(cluster, partition, opts).slice(0, -1)}*.${encodeToken(namespace)}.>`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parse(seq: number, subject: string, data: Uint8Array): LogMessage {
  try {
    return { seq, subject, data: JSON.parse(utf8.decode(data)) as unknown };
  } catch (err) {
    return { seq, subject, data: undefined, parseError: err instanceof Error ? err.message : String(err) };
  }
}

export interface ReadLogOptions {
  /** Messages per fetch. Defaults to 500. */
  readonly batch?: number;
  /** How long one fetch waits for messages, ms (the client's minimum is 1000). Defaults to 1000. */
  readonly fetchWaitMs?: number;
  /** The first sequence to read (a replay from a snapshot reads only its tail). Defaults to the first stored. */
  readonly fromSeq?: number;
}

/** Messages matching `filter` with fromSeq ≤ seq ≤ upToSeq, in stream order; [] when upToSeq ≤ 0 or none match. */
export async function readKubeLog(js: JetStreamClient, stream: string, filter: string, upToSeq: number, opts: ReadLogOptions = {}): Promise<LogMessage[]> {
  const from = opts.fromSeq ?? 1;
  if (upToSeq <= 0 || upToSeq < from) return [];
  const consumer = await js.consumers.get(stream, { filter_subjects: filter, ...(from > 1 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from } : {}) });
  const out: LogMessage[] = [];
  try {
    let done = false;
    while (!done) {
      const batch = await consumer.fetch({ max_messages: opts.batch ?? 500, expires: Math.max(1000, opts.fetchWaitMs ?? 1000) });
      let received = 0;
      for await (const m of batch) {
        received++;
        if (m.seq <= upToSeq) out.push(parse(m.seq, m.subject, m.data));
        // pending counts what the filter still holds after this message.
        if (m.seq >= upToSeq || m.info.pending === 0) {
          done = true;
          break;
        }
      }
      if (received === 0) done = true;
    }
  } finally {
    await consumer.delete().catch(() => false);
  }
  return out;
}
