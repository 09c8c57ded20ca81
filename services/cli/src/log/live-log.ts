// The live log as a LogSource: KUBE and DLQ read back from NATS (@slicemesh/nats), the settings
// the slicer last ran with from Postgres (@slicemesh/db). Used by `slicemesh log` without -f and
// by the web view; the engine in @slicemesh/history cannot tell it from a file.

import type { Db } from '@slicemesh/db';
import { createDb, latestReconcileSettings, loadReconcilePoints } from '@slicemesh/db';
import type { DeadLetterEntry, LogEvent, LogPoint, LogSettings, LogSource, ScheduledReconcile } from '@slicemesh/history';
import { EMPTY_SNAPSHOT, logSettings } from '@slicemesh/history';
import type { DeadLetterBody, JetStreamClient, NatsConnection, StoredMessage, StreamNames } from '@slicemesh/nats';
import { DEFAULT_NAMES, connectNats, encodeToken, firstMessageFrom, jetstream, jetstreamManager, parseReconcileID, readStreamRange, redactNatsUrl, streamSeqBounds } from '@slicemesh/nats';

export interface LiveLogOptions {
  /** Example: `nats://127.0.0.1:4222`. */
  readonly natsUrl: string;
  /** Postgres holding the slicer's records; without it the settings are the defaults (or `settings`). */
  readonly databaseUrl?: string;
  /** Default `slicemesh`. */
  readonly schema?: string;
  readonly cluster: string;
  /** Stream names and subject prefix; default KUBE, SLICES, DLQ and no prefix. */
  readonly names?: StreamNames;
  /** Settings that override what Postgres says (e.g. --max-endpoints-per-slice). */
  readonly settings?: Partial<Omit<LogSettings, 'cluster' | 'prefix'>>;
  /** A file with the reader role's nkey seed (NATS_NKEY_SEED_FILE), for a locked-down NATS. */
  readonly nkeySeedFile?: string;
  /** A .creds file (NATS_CREDS_FILE) instead, for decentralized auth; at most one of the two. */
  readonly credsFile?: string;
}

/** A live LogSource, plus what only live logs can do. */
export interface LiveLog extends LogSource {
  readonly js: JetStreamClient;
  readonly names: StreamNames;
  /**
   * The KUBE stream's first stored sequence when it is above 1: older messages were removed
   * (a max age or a purge), so a replay misses the objects they created. null otherwise.
   */
  readonly trimmedBefore: number | null;
}

const pointOf = (m: StoredMessage): LogPoint => ({ seq: m.seq, time: m.time });

function eventOf(m: StoredMessage): LogEvent {
  return m.parseError === undefined ? { seq: m.seq, time: m.time, subject: m.subject, data: m.data } : { seq: m.seq, time: m.time, subject: m.subject, data: m.raw, parseError: m.parseError };
}

/** The settings a reconcile record kept, as far as they are LogSettings. */
function recordedSettings(v: unknown): Partial<LogSettings> {
  if (v === null || typeof v !== 'object') return {};
  const s = v as Record<string, unknown>;
  return {
    ...(typeof s['managedBy'] === 'string' ? { managedBy: s['managedBy'] } : {}),
    ...(typeof s['maxEndpointsPerSlice'] === 'number' ? { maxEndpointsPerSlice: s['maxEndpointsPerSlice'] } : {}),
  };
}

/**
 * Connects and returns the live log of `opts.cluster`. Throws when NATS (or Postgres, when a
 * URL is given) cannot be reached. close() disconnects.
 */
export async function openLiveLog(opts: LiveLogOptions): Promise<LiveLog> {
  const names = opts.names ?? DEFAULT_NAMES;
  // The reader role: its inbox, and (with the reader's seed) its permissions, which read
  // everything and write nothing; `log dlq redrive` takes the admin's seed, which may publish.
  const nc: NatsConnection = await connectNats({
    url: opts.natsUrl,
    name: 'slicemesh-log',
    role: 'reader',
    ...(opts.nkeySeedFile === undefined ? {} : { nkeySeedFile: opts.nkeySeedFile }),
    ...(opts.credsFile === undefined ? {} : { credsFile: opts.credsFile }),
  });
  let db: { readonly db: Db; readonly close: () => Promise<void> } | undefined;
  try {
    if (opts.databaseUrl !== undefined) db = await createDb({ url: opts.databaseUrl, schema: opts.schema ?? 'slicemesh', max: 2 });
  } catch (err) {
    await nc.close();
    throw err;
  }
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const cluster = encodeToken(opts.cluster);
  const kubeFilter = `${names.prefix}kube.${cluster}.>`;
  const kubeBounds = await streamSeqBounds(jsm, names.kube).catch(() => null);
  const dlqFilter = `${names.prefix}dlq.${cluster}.>`;
  let settings: LogSettings | undefined;
  const source: LiveLog = {
    kind: 'live',
    description: `${names.kube} on ${redactNatsUrl(opts.natsUrl)}`,
    js,
    names,
    trimmedBefore: kubeBounds !== null && kubeBounds.first > 1 ? kubeBounds.first : null,
    settings: async () => {
      if (settings === undefined) {
        const recorded = db === undefined ? {} : recordedSettings(await latestReconcileSettings(db.db, opts.cluster));
        settings = logSettings({ ...recorded, ...opts.settings, cluster: opts.cluster, prefix: names.prefix });
      }
      return settings;
    },
    snapshot: async () => EMPTY_SNAPSHOT,
    bounds: async () => {
      const b = await streamSeqBounds(jsm, names.kube);
      if (b === null || b.messages === 0) return null;
      const first = await firstMessageFrom(js, names.kube, kubeFilter, b.first);
      if (first === null) return null;
      // The last message of the cluster: the stream's last, unless another cluster wrote it.
      const lastAny = await jsm.streams.getMessage(names.kube, { seq: b.last }).catch(() => null);
      let last: LogPoint | null = null;
      if (lastAny !== null && lastAny.subject.startsWith(`${names.prefix}kube.${cluster}.`)) last = { seq: lastAny.seq, time: lastAny.time.toISOString() };
      else {
        const byLast = await jsm.streams.getMessage(names.kube, { last_by_subj: kubeFilter }).catch(() => null);
        if (byLast !== null) last = { seq: byLast.seq, time: byLast.time.toISOString() };
      }
      return last === null ? null : { first: pointOf(first), last };
    },
    eventAtOrAfter: async (seq) => {
      const m = await firstMessageFrom(js, names.kube, kubeFilter, seq);
      return m === null ? null : pointOf(m);
    },
    events: async function* (from, to) {
      for await (const m of readStreamRange(js, names.kube, { filter: kubeFilter, fromSeq: from, toSeq: to })) yield eventOf(m);
    },
    deadLetters: async () => {
      const out: DeadLetterEntry[] = [];
      if ((await streamSeqBounds(jsm, names.dlq)) === null) return out;
      for await (const m of readStreamRange(js, names.dlq, { filter: dlqFilter })) {
        const stage = m.subject.slice(m.subject.lastIndexOf('.') + 1);
        const body = (m.data ?? { reason: `unreadable dead letter: ${m.parseError ?? ''}`, at: m.time, object: m.raw ?? '', objectBytes: 0, truncated: false }) as DeadLetterBody;
        out.push({ seq: m.seq, time: m.time, subject: m.subject, stage, body });
      }
      return out;
    },
    reconciles: async () => {
      if (db === undefined) return [];
      // A record's view reached its partition offset and, per its id, its node offset.
      const points: ScheduledReconcile[] = (await loadReconcilePoints(db.db, opts.cluster)).map((r) => ({
        seq: Math.max(r.kubeSeqTo, parseReconcileID(r.reconcileId)?.nodesTo ?? 0),
        service: `${r.namespace}/${r.service}`,
      }));
      return points.sort((a, b) => a.seq - b.seq);
    },
    close: async () => {
      await nc.close();
      await db?.close();
    },
  };
  return source;
}
