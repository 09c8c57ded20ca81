// The hints service's Events (A.13.5) against real NATS and Postgres: a refused decision becomes
// an EventRequest.v1 on EVENTS, on the Service with its uid, from endpoint-slice-controller —
// sent only after the reconcile wrote its state.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestDb } from '@slicemesh/db/testing';
import { withTestDb } from '@slicemesh/db/testing';
import { loadHintDecisions } from '@slicemesh/db';
import type { Node, Service } from '@slicemesh/model';
import type { EventRequestMessage } from '@slicemesh/nats';
import { HINTS_EVENT_COMPONENT, ensureStreams, eventsSubject, kubeNodeSubject, kubeObjectSubject, parseEventRequest, partitionOf, publishAcked, slicesSubject } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { makeNode } from '@slicemesh/testing';
import { REASON_HINTS_DISABLED } from '@slicemesh/topology';
import { hintsConfigWith } from './config.ts';
import type { HintsHandle } from './hints-service.ts';
import { startHints } from './hints-service.ts';
import { autoService, threeZoneSlice } from './test-fixtures.ts';

const CLUSTER = 'c1';
let f: JetStreamFixture;
let tdb: TestDb;
const handles: HintsHandle[] = [];
let id = 0;

beforeEach(async () => {
  f = await withJetStream();
  tdb = await withTestDb();
  await ensureStreams(f.jsm, f.names);
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await f.cleanup();
  await tdb.close();
});

const versioned = <T extends Node | Service>(o: T): T => ({ ...o, metadata: { ...o.metadata, resourceVersion: String(++id + 1000) } });

async function requests(): Promise<EventRequestMessage[]> {
  const subject = eventsSubject({ cluster: CLUSTER, component: HINTS_EVENT_COMPONENT }, f.names);
  const info = await f.jsm.streams.info(f.names.events as string);
  const out: EventRequestMessage[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await f.jsm.streams.getMessage(f.names.events as string, { seq });
    const parsed = m === null ? undefined : parseEventRequest(m.json(), m.subject, { cluster: CLUSTER, prefix: f.names.prefix });
    if (m?.subject === subject && parsed?.ok) out.push(parsed.value);
  }
  return out;
}

describe('hints service Events', () => {
  it('A.13.5 a refused Auto decision becomes a TopologyAwareHintsDisabled request on the Service, after its decision is stored', async () => {
    const h = startHints(hintsConfigWith({
      natsUrl: f.url, partitions: 4, databaseUrl: tdb.url, dbSchema: tdb.schema, cluster: CLUSTER,
      kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, eventsStream: f.names.events as string, subjectPrefix: f.names.prefix,
      svcBucket: f.names.svc, viewsBucket: f.names.views, hintedBucket: f.names.hinted, durablePrefix: `hints${f.id}`,
      batchPeriod: 10, drainPollInterval: 20, logLevel: 'silent', workers: 2,
    }));
    handles.push(h);
    await h.ready;
    const node = versioned(makeNode('n-a', { zone: 'zone-a' }));
    await publishAcked(f.js, kubeNodeSubject({ cluster: CLUSTER, name: 'n-a' }, f.names), { type: 'Upserted.v1', cluster: CLUSTER, kind: 'Node', object: node, observedAt: '2026-01-01T00:00:00Z' }, { msgID: `n/${++id}` });
    const svc = versioned(autoService());
    const ns = svc.metadata.namespace ?? 'default';
    await publishAcked(f.js, kubeObjectSubject({ cluster: CLUSTER, partition: partitionOf(ns, 4), kind: 'Service', namespace: ns, name: svc.metadata.name }, f.names), { type: 'Upserted.v1', cluster: CLUSTER, kind: 'Service', object: svc, observedAt: '2026-01-01T00:00:00Z' }, { msgID: `s/${++id}` });
    await publishAcked(f.js, slicesSubject({ cluster: CLUSTER, partition: partitionOf('default', 4), namespace: 'default', service: 'web' }, f.names), { type: 'SliceChanged.v1', cluster: CLUSTER, namespace: 'default', service: 'web', upserts: [threeZoneSlice()], deletes: [], kubeSeq: { from: 1, to: 1 }, reconcileID: 'r' }, { msgID: `o/${++id}` });

    let got: EventRequestMessage[] = [];
    for (let i = 0; i < 200 && got.length === 0; i++) {
      got = await requests();
      if (got.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    const [d] = await loadHintDecisions(tdb.db, CLUSTER);
    expect(d?.event?.reason).toBe(REASON_HINTS_DISABLED);
    expect(got[0]).toMatchObject({
      component: HINTS_EVENT_COMPONENT,
      involvedObject: { kind: 'Service', apiVersion: 'v1', namespace: 'default', name: 'web', ...(svc.metadata.uid ? { uid: svc.metadata.uid } : {}) },
      event: d?.event ?? undefined,
    });
  });
});
