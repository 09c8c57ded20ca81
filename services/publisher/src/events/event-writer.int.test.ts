// The event writer against real NATS and cluster-sim over HTTP (habit 10): Event requests on a
// fresh EVENTS stream become core/v1 Events in the simulated API server, correlated like
// client-go's recorder (A.13), with every API request counted.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { CoreEventApi, KubeJson } from '@slicemesh/kube';
import { KubeWriteError, buildKubeConfig, coreEventApi } from '@slicemesh/kube';
import type { EventRequestMessage, InvolvedObject } from '@slicemesh/nats';
import {
  HINTS_EVENT_COMPONENT, MIRRORING_EVENT_COMPONENT, ensureStreams, eventRequest, eventRequestMsgId, eventsSubject, publishAcked,
} from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import type { KubeEvent } from '@slicemesh/model';
import { createMetrics } from '@slicemesh/runtime';
import type { PublisherConfig } from '../config.ts';
import { publisherConfigWith } from '../config.ts';
import type { EventWriterDeps, EventWriterHandle } from './event-writer.ts';
import { startEventWriter } from './event-writer.ts';

const CLUSTER = 'c1';
let f: JetStreamFixture;
let sim: ClusterSim;
let config: PublisherConfig;
const handles: EventWriterHandle[] = [];

beforeEach(async () => {
  f = await withJetStream();
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  await ensureStreams(f.jsm, f.names);
  config = publisherConfigWith({
    mode: 'write', natsUrl: f.url, cluster: CLUSTER,
    kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, eventsStream: f.names.events as string, subjectPrefix: f.names.prefix, durablePrefix: `pub${f.id}`,
    kubeServer: sim.url, kubeApiQps: 1000, kubeApiBurst: 1000,
    logLevel: (process.env['PUBLISHER_TEST_LOG'] ?? 'silent') as 'silent',
  });
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await sim.close();
  await f.cleanup();
});

/** Real HTTP to the simulator, every request counted; `failNext` answers that many requests with 503 first. */
interface CountingApi extends CoreEventApi {
  readonly requests: string[];
  failNext: number;
}
function countingApi(): CountingApi {
  const inner = coreEventApi(buildKubeConfig({ type: 'server', url: sim.url }), { timeoutMs: 5000 });
  const fail = (verb: 'create' | 'patch'): void => {
    if (api.failNext <= 0) return;
    api.failNext--;
    throw new KubeWriteError(verb, '/api/v1/events', 503, 'ServiceUnavailable', 'try later');
  };
  const api: CountingApi = {
    requests: [],
    failNext: 0,
    create: async (ns, e) => {
      api.requests.push(`create ${String((e['metadata'] as KubeJson)['name'])}`);
      fail('create');
      return inner.create(ns, e);
    },
    patch: async (ns, name, p) => {
      api.requests.push(`patch ${name} ${String(p['count'])}`);
      fail('patch');
      return inner.patch(ns, name, p);
    },
  };
  return api;
}

const svc: InvolvedObject = { kind: 'Service', apiVersion: 'v1', namespace: 'default', name: 'web', uid: 'uid-web' };
const eps: InvolvedObject = { kind: 'Endpoints', apiVersion: 'v1', namespace: 'default', name: 'legacy' };
const disabled: KubeEvent = { type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Insufficient number of endpoints, addressType: IPv4' };
const enabled: KubeEvent = { type: 'Normal', reason: 'TopologyAwareHintsEnabled', message: 'Topology Aware Hints has been enabled, addressType: IPv4' };
/** Request times a little in the past, a second apart, as a flapping reconcile would send them. */
const T0 = Date.now() - 300_000;

async function publish(reqs: readonly EventRequestMessage[]): Promise<void> {
  for (const r of reqs) {
    const subject = eventsSubject({ cluster: r.cluster, component: r.component }, f.names);
    await publishAcked(f.js, subject, r, { msgID: eventRequestMsgId(subject, r) });
  }
}

function start(deps: EventWriterDeps = {}, overrides: Partial<PublisherConfig> = {}): EventWriterHandle {
  const h = startEventWriter({ ...config, ...overrides }, { retryDelayMs: () => 10, ...deps });
  handles.push(h);
  return h;
}

async function liveEvents(namespace = 'default'): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${sim.url}/api/v1/namespaces/${namespace}/events`);
  const list = (await res.json()) as { items: Record<string, unknown>[] };
  return list.items;
}

const total = (h: EventWriterHandle): number => Object.values(h.counts()).reduce((a, b) => a + (b ?? 0), 0);

describe('event writer (write mode) against cluster-sim', () => {
  it('A.13.1 one decision recorded 100 times: 25 API requests (1 create, 24 patches) and one Event of count 25', async () => {
    const api = countingApi();
    const h = start({ api });
    await h.ready;
    await publish(Array.from({ length: 100 }, (_, i) => eventRequest(CLUSTER, HINTS_EVENT_COMPONENT, svc, disabled, T0 + i * 1000)));
    await vi.waitFor(() => expect(total(h)).toBe(100), { timeout: 20_000, interval: 50 });
    expect(h.counts()).toEqual({ created: 1, patched: 24, 'spam-dropped': 75 });
    expect(api.requests.length).toBe(25);
    const events = await liveEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      involvedObject: { kind: 'Service', name: 'web', namespace: 'default', uid: 'uid-web' },
      type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: disabled.message,
      source: { component: 'endpoint-slice-controller' }, count: 25,
    });
    expect(String((events[0]?.['metadata'] as KubeJson)['name'])).toMatch(/^web\.[0-9a-f]+$/);
  });

  it('A.13.1 a decision flapping 100 times between enabled and disabled: still 25 requests, two Events', async () => {
    const api = countingApi();
    const h = start({ api });
    await h.ready;
    await publish(Array.from({ length: 100 }, (_, i) => eventRequest(CLUSTER, HINTS_EVENT_COMPONENT, svc, i % 2 === 0 ? disabled : enabled, T0 + i * 1000)));
    await vi.waitFor(() => expect(total(h)).toBe(100), { timeout: 20_000, interval: 50 });
    expect(api.requests.length).toBe(25);
    const byReason = Object.fromEntries((await liveEvents()).map((e) => [e['reason'], e['count']]));
    expect(byReason).toEqual({ TopologyAwareHintsDisabled: 13, TopologyAwareHintsEnabled: 12 });
  });

  it('A.13.2 similar events with 12 distinct messages: 9 Events of their own and one combined Event of count 3', async () => {
    const h = start({ api: countingApi() });
    await h.ready;
    await publish(Array.from({ length: 12 }, (_, i) => eventRequest(CLUSTER, HINTS_EVENT_COMPONENT, svc, { ...disabled, message: `reason ${i + 1}, addressType: IPv4` }, T0 + i * 1000)));
    await vi.waitFor(() => expect(total(h)).toBe(12), { timeout: 20_000, interval: 50 });
    const events = await liveEvents();
    expect(events).toHaveLength(10);
    const combined = events.filter((e) => String(e['message']).startsWith('(combined from similar events): '));
    expect(combined).toMatchObject([{ count: 3, message: '(combined from similar events): reason 12, addressType: IPv4' }]);
  });

  it('A.13.5 a mirroring warning is recorded on the Endpoints object by the mirroring controller', async () => {
    const h = start({ api: countingApi() });
    await h.ready;
    const warning: KubeEvent = { type: 'Warning', reason: 'InvalidIPAddress', message: 'Skipped 1 invalid IP addresses when mirroring to EndpointSlices' };
    await publish([eventRequest(CLUSTER, MIRRORING_EVENT_COMPONENT, eps, warning, T0)]);
    await vi.waitFor(() => expect(h.counts()).toEqual({ created: 1 }), { timeout: 10_000, interval: 50 });
    expect(await liveEvents()).toMatchObject([{ involvedObject: { kind: 'Endpoints', name: 'legacy' }, reason: 'InvalidIPAddress', type: 'Warning', source: { component: 'endpoint-slice-mirroring-controller' }, count: 1 }]);
  });

  it('A.13.4 503s are retried, a patch of an expired Event creates it again, and an old request is skipped', async () => {
    const api = countingApi();
    const metrics = createMetrics('publisher');
    const h = start({ api, metrics });
    await h.ready;
    api.failNext = 2;
    await publish([eventRequest(CLUSTER, HINTS_EVENT_COMPONENT, svc, disabled, T0)]);
    await vi.waitFor(() => expect(h.counts()).toEqual({ created: 1 }), { timeout: 10_000, interval: 50 });
    expect(api.requests).toHaveLength(3);
    const [first] = await liveEvents();
    const name = String((first?.['metadata'] as KubeJson)['name']);
    await fetch(`${sim.url}/api/v1/namespaces/default/events/${name}`, { method: 'DELETE' });
    await publish([eventRequest(CLUSTER, HINTS_EVENT_COMPONENT, svc, disabled, T0 + 1000), eventRequest(CLUSTER, HINTS_EVENT_COMPONENT, svc, disabled, Date.now() - 2 * 3_600_000)]);
    await vi.waitFor(() => expect(h.counts()).toEqual({ created: 1, recreated: 1 }), { timeout: 10_000, interval: 50 });
    expect(await liveEvents()).toMatchObject([{ metadata: { name }, count: 2 }]);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/slicemesh_publisher_event_requests_total\{result="stale",component="publisher"\} 1/);
    expect(text).toMatch(/slicemesh_publisher_event_api_retries_total\{verb="create",code="503",component="publisher"\} 2/);
  });
});

describe('event writer (shadow mode)', () => {
  it('correlates and counts, writes nothing', async () => {
    const api = countingApi();
    const h = start({ api }, { mode: 'shadow' });
    await h.ready;
    await publish(Array.from({ length: 30 }, (_, i) => eventRequest(CLUSTER, HINTS_EVENT_COMPONENT, svc, disabled, T0 + i * 1000)));
    await vi.waitFor(() => expect(total(h)).toBe(30), { timeout: 20_000, interval: 50 });
    expect(h.counts()).toEqual({ 'would-create': 1, 'would-patch': 24, 'spam-dropped': 5 });
    expect(api.requests).toEqual([]);
    expect(await liveEvents()).toEqual([]);
  });
});
