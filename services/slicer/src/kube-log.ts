// Reading a slice of the KUBE log back (for the replay check): one filter, from a sequence up to
// another, through @slicemesh/nats' range reader.

import type { JetStreamClient } from '@slicemesh/nats';
import { encodeToken, kubePartitionFilter, readStreamRange } from '@slicemesh/nats';
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

export interface ReadLogOptions {
  /** Messages per fetch. Defaults to 500. */
  readonly batch?: number;
  /** The first sequence to read (a replay from a snapshot reads only its tail). Defaults to the first stored. */
  readonly fromSeq?: number;
}

/** Messages matching `filter` with fromSeq ≤ seq ≤ upToSeq, in stream order; [] when upToSeq ≤ 0 or none match. */
export async function readKubeLog(js: JetStreamClient, stream: string, filter: string, upToSeq: number, opts: ReadLogOptions = {}): Promise<LogMessage[]> {
  const from = opts.fromSeq ?? 1;
  if (upToSeq <= 0 || upToSeq < from) return [];
  const out: LogMessage[] = [];
  // A stored message is a LogMessage with its time and raw text besides.
  for await (const m of readStreamRange(js, stream, { filter, fromSeq: from, toSeq: upToSeq, batch: opts.batch ?? 500 })) out.push(m);
  return out;
}
