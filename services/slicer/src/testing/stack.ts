// Integration-test fixture: a real JetStream and a fresh Postgres schema, a publisher that
// plays the watcher, and helpers to wait until the slicer has caught up.

import { vi } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { loadRelayPosition, loadSlices, oldestOpenTransactions } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import { ensureStreams, pendingCount, publishAcked } from '@slicemesh/nats';
import { withJetStream } from '../../../../libs/nats/testing/jetstream.ts';
import type { JetStreamFixture } from '../../../../libs/nats/testing/jetstream.ts';
import type { SlicerConfig } from '../config.ts';
import { resolveSlicerSettings, slicerConfigWith, slicerDurables } from '../config.ts';
import type { LogMessage } from '../kube-log.ts';
import { readKubeLog } from '../kube-log.ts';
import { outboxBacklog } from '../relay.ts';
import { RELAY_NAME } from '../slicer.ts';
import type { Slicer } from '../slicer.ts';
import type { EventOptions, WatchedObject } from './kube-events.ts';
import { atVersion, envelopeOf, subjectOf } from './kube-events.ts';

export interface Stack {
  readonly js: JetStreamFixture;
  readonly db: TestDb;
  /** Slicer settings bound to this fixture's streams and schema. */
  config(overrides?: Partial<SlicerConfig>): SlicerConfig;
  /** Publishes `obj` at resourceVersion `rv` as the watcher would (msgID cluster/uid/rv). */
  publish(obj: WatchedObject, rv: number, o?: EventOptions & { readonly msgID?: string }): Promise<number>;
  /** Every message of a stream matching `filter` (within the stream's subjects), in order. */
  read(stream: string, filter: string): Promise<LogMessage[]>;
  /** Waits until the consumers caught up, no Service is dirty and the outbox is published. */
  /** Waits until the consumers of `config` have nothing pending, `slicers` nothing dirty, and the outbox is published. */
  settled(config: SlicerConfig, ...slicers: readonly Slicer[]): Promise<void>;
  slices(service: string, namespace?: string): Promise<readonly EndpointSlice[]>;
  close(): Promise<void>;
}

export async function withStack(): Promise<Stack> {
  const js = await withJetStream();
  const db = await withTestDb();
  await ensureStreams(js.jsm, js.names);
  const base = {
    natsUrl: js.url,
    databaseUrl: db.url,
    dbSchema: db.schema,
    cluster: 'c1',
    kubeStream: js.names.kube,
    slicesStream: js.names.slices,
    dlqStream: js.names.dlq,
    eventsStream: js.names.events ?? 'EVENTS',
    subjectPrefix: js.names.prefix,
    durablePrefix: `slicer-${js.id}`,
    healthPort: 0,
    ackWait: 1000,
    logLevel: 'silent' as const,
  };
  return {
    js,
    db,
    config: (overrides = {}) => slicerConfigWith({ ...base, ...overrides }),
    publish: async (obj, rv, o = {}) => {
      const versioned = atVersion(obj, rv);
      const opts = { cluster: 'c1', prefix: js.names.prefix, ...o };
      const msgID = o.msgID ?? `${opts.cluster}/${obj.metadata.uid ?? obj.metadata.name}/${rv}${o.type === 'Deleted.v1' ? '/deleted' : ''}`;
      return (await publishAcked(js.js, subjectOf(versioned, opts), envelopeOf(versioned, opts), { msgID })).seq;
    },
    read: async (stream, filter) => {
      const last = (await js.jsm.streams.info(stream)).state.last_seq;
      return readKubeLog(js.js, stream, filter, last);
    },
    settled: async (config, ...slicers) => {
      const s = resolveSlicerSettings(config);
      const durables = slicerDurables(s.durablePrefix, s.partitions);
      await vi.waitFor(
        async () => {
          for (const d of durables) if ((await pendingCount(js.jsm, config.kubeStream, d)) !== 0) throw new Error(`${d} has pending messages`);
          if (slicers.some((sl) => sl.pending() > 0)) throw new Error('dirty Services left');
          const backlog = await outboxBacklog(db.db, RELAY_NAME);
          if (backlog > 0) {
            // What holds the relay back, if anything on the server does (the failure message says).
            const open = await oldestOpenTransactions(db.db);
            const held = open.map((t) => `pid ${t.pid} in ${t.database ?? '?'} open ${t.ageMs} ms (${t.state ?? '?'}): ${t.query}`);
            throw new Error(`outbox not yet published: ${backlog} rows past ${JSON.stringify(await loadRelayPosition(db.db, RELAY_NAME))}; relays running: ${slicers.filter((sl) => sl.relaying()).length}; open transactions: ${held.join(' | ') || 'none'}`);
          }
        },
        { timeout: 20_000, interval: 100 },
      );
    },
    slices: (service, namespace = 'default') => loadSlices(db.db, 'c1', namespace, service),
    close: async () => {
      await db.close();
      await js.cleanup();
    },
  };
}
