// The HTTP API against a running simulator (empty scenario): discovery, list, watch and
// write semantics as real clients see them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '../start.ts';
import type { ClusterSim } from '../start.ts';

let sim: ClusterSim;

beforeAll(async () => {
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO, bookmarkIntervalMs: 200 });
});
afterAll(async () => {
  await sim.close();
});

interface WatchEvent {
  type: string;
  object: { kind?: string; code?: number; reason?: string; metadata: { name?: string; resourceVersion?: string; annotations?: Record<string, string> } };
}

async function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}${path}`, { method, headers: { 'content-type': contentType }, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Reads watch events until `done(events)` holds, the stream ends, or `ms` pass. */
async function watch(path: string, done: (events: WatchEvent[]) => boolean, ms = 5000): Promise<{ events: WatchEvent[]; ended: boolean; status: number }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  const res = await fetch(`${sim.url}${path}`, { signal: abort.signal });
  const events: WatchEvent[] = [];
  if (res.status !== 200) {
    clearTimeout(timer);
    events.push({ type: 'HTTP', object: (await res.json()) as WatchEvent['object'] });
    return { events, ended: true, status: res.status };
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  try {
    while (!done(events)) {
      const { value, done: eof } = await reader.read();
      if (eof) {
        ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)) as WatchEvent);
        buffer = buffer.slice(nl + 1);
      }
    }
  } catch {
    // aborted by the timer: return what arrived
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return { events, ended, status: res.status };
}

const pod = (name: string, labels: Record<string, string> = { app: 'web' }) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'c' }] } });
const names = (events: WatchEvent[]) => events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`);

describe('discovery', () => {
  it('serves /api, /api/v1, /apis, /version and OpenAPI v3', async () => {
    expect((await call('GET', '/api')).json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const core = (await call('GET', '/api/v1')).json as { resources: { name: string; shortNames?: string[]; namespaced: boolean; verbs: string[] }[] };
    const byName = Object.fromEntries(core.resources.map((r) => [r.name, r]));
    expect([byName['services']!.shortNames, byName['pods']!.shortNames, byName['nodes']!.shortNames, byName['endpoints']!.shortNames]).toEqual([['svc'], ['po'], ['no'], ['ep']]);
    expect([byName['nodes']!.namespaced, byName['pods']!.namespaced, byName['pods']!.verbs]).toEqual([false, true, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']]);
    expect(((await call('GET', '/apis')).json as { groups: { name: string }[] }).groups.map((g) => g.name)).toEqual(['discovery.k8s.io', 'coordination.k8s.io', 'multicluster.x-k8s.io', 'events.k8s.io']);
    const mcs = (await call('GET', '/apis/multicluster.x-k8s.io/v1alpha1')).json as { resources: { name: string; kind: string; shortNames?: string[]; namespaced: boolean }[] };
    expect(mcs.resources.map((r) => [r.name, r.kind, r.shortNames ?? [], r.namespaced])).toEqual([
      ['serviceexports', 'ServiceExport', ['svcex'], true],
      ['serviceexports/status', 'ServiceExport', [], true],
      ['serviceimports', 'ServiceImport', ['svcim', 'svcimport'], true],
      ['serviceimports/status', 'ServiceImport', [], true],
    ]);
    expect((await call('GET', '/version')).json).toMatchObject({ major: '1', minor: '32' });
    expect((await call('GET', '/openapi/v3')).json).toMatchObject({ paths: { 'api/v1': { serverRelativeURL: expect.stringMatching(/^\/openapi\/v3\/api\/v1\?hash=/) } } });
  });

  it('answers unknown paths with a 404 Status', async () => {
    expect((await call('GET', '/apis/apps/v1/deployments')).json).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    // A write too: 404, not 405 (a write to a group whose CRDs are not installed).
    expect((await call('POST', '/apis/apps/v1/namespaces/default/deployments', { kind: 'Deployment', metadata: { name: 'd' } })).json).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });
});

describe('writes', () => {
  it('POST creates (201), a second POST is 409 AlreadyExists', async () => {
    const created = await call('POST', '/api/v1/namespaces/default/pods', pod('w1'));
    expect([created.status, (created.json['metadata'] as { namespace: string }).namespace]).toEqual([201, 'default']);
    expect((await call('POST', '/api/v1/namespaces/default/pods', pod('w1'))).json).toMatchObject({ code: 409, reason: 'AlreadyExists', message: 'pods "w1" already exists' });
  });

  it('PUT with a stale resourceVersion is 409 Conflict; a namespace mismatch is 400', async () => {
    const { json } = await call('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'put1' }, spec: { ports: [{ port: 80 }] } });
    const meta = json['metadata'] as { resourceVersion: string };
    const ok = await call('PUT', '/api/v1/namespaces/default/services/put1', { ...json, metadata: { ...meta, labels: { a: 'b' } } });
    expect(ok.status).toBe(200);
    expect((await call('PUT', '/api/v1/namespaces/default/services/put1', { ...json, metadata: { ...meta, labels: { a: 'c' } } })).json).toMatchObject({ code: 409, reason: 'Conflict' });
    expect((await call('PUT', '/api/v1/namespaces/default/services/put1', { ...json, metadata: { name: 'put1', namespace: 'other' } })).status).toBe(400);
  });

  it('PATCH: merge, strategic and JSON patch; an unknown content type is 415', async () => {
    await call('POST', '/api/v1/namespaces/default/pods', pod('patch1'));
    const merge = await call('PATCH', '/api/v1/namespaces/default/pods/patch1', { metadata: { labels: { tier: 'x' } } }, 'application/merge-patch+json');
    expect((merge.json['metadata'] as { labels: unknown }).labels).toEqual({ app: 'web', tier: 'x' });
    const smp = await call('PATCH', '/api/v1/namespaces/default/pods/patch1', { spec: { containers: [{ name: 'c', image: 'v2' }] } }, 'application/strategic-merge-patch+json');
    expect((smp.json['spec'] as { containers: unknown[] }).containers).toEqual([{ name: 'c', image: 'v2' }]);
    const jp = await call('PATCH', '/api/v1/namespaces/default/pods/patch1', [{ op: 'remove', path: '/metadata/labels/tier' }], 'application/json-patch+json');
    expect((jp.json['metadata'] as { labels: unknown }).labels).toEqual({ app: 'web' });
    expect((await call('PATCH', '/api/v1/namespaces/default/pods/patch1', {}, 'text/plain')).status).toBe(415);
  });

  it('status subresource: PUT /status changes only status; PUT on the object keeps status', async () => {
    const { json } = await call('POST', '/api/v1/nodes', { metadata: { name: 'status-node' }, status: { allocatable: { cpu: '2' } } });
    const st = await call('PUT', '/api/v1/nodes/status-node/status', { ...json, metadata: { ...(json['metadata'] as object), labels: { ignored: 'yes' } }, status: { allocatable: { cpu: '8' } } });
    expect([(st.json['metadata'] as { labels?: unknown }).labels, st.json['status']]).toEqual([undefined, { allocatable: { cpu: '8' } }]);
    const main = await call('PUT', '/api/v1/nodes/status-node', { ...st.json, spec: { unschedulable: true }, status: {} });
    expect([main.json['spec'], main.json['status']]).toEqual([{ unschedulable: true }, { allocatable: { cpu: '8' } }]);
  });

  it('DELETE answers with the object for pods and a Success Status for endpoints; a missing one is 404', async () => {
    await call('POST', '/api/v1/namespaces/default/endpoints', { metadata: { name: 'del1' }, subsets: [] });
    expect((await call('DELETE', '/api/v1/namespaces/default/endpoints/del1')).json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'del1', kind: 'endpoints' } });
    await call('POST', '/api/v1/namespaces/default/pods', pod('del2'));
    expect((await call('DELETE', '/api/v1/namespaces/default/pods/del2')).json).toMatchObject({ kind: 'Pod', metadata: { name: 'del2' } });
    expect((await call('DELETE', '/api/v1/namespaces/default/pods/del2')).status).toBe(404);
  });

  it('dryRun=All answers without storing', async () => {
    expect((await call('POST', '/api/v1/namespaces/default/pods?dryRun=All', pod('dry1'))).status).toBe(201);
    expect((await call('GET', '/api/v1/namespaces/default/pods/dry1')).status).toBe(404);
  });
});

describe('list', () => {
  it('filters by label and field selectors and pages with limit/continue', async () => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'listing' } });
    for (const n of ['a', 'b', 'c', 'd']) await call('POST', '/api/v1/namespaces/listing/pods', pod(n, { app: n === 'd' ? 'db' : 'web' }));
    const web = await call('GET', '/api/v1/namespaces/listing/pods?labelSelector=app%3Dweb');
    expect([web.json['kind'], (web.json['items'] as { metadata: { name: string } }[]).map((p) => p.metadata.name)]).toEqual(['PodList', ['a', 'b', 'c']]);
    const byName = await call('GET', '/api/v1/pods?fieldSelector=metadata.name%3Db,metadata.namespace%3Dlisting');
    expect((byName.json['items'] as unknown[]).length).toBe(1);
    const page1 = await call('GET', '/api/v1/namespaces/listing/pods?limit=3');
    const meta1 = page1.json['metadata'] as { continue: string; remainingItemCount: number; resourceVersion: string };
    expect([(page1.json['items'] as unknown[]).length, meta1.remainingItemCount]).toEqual([3, 1]);
    const page2 = await call('GET', `/api/v1/namespaces/listing/pods?limit=3&continue=${meta1.continue}`);
    expect([(page2.json['items'] as { metadata: { name: string } }[]).map((p) => p.metadata.name), (page2.json['metadata'] as { resourceVersion: string }).resourceVersion]).toEqual([['d'], meta1.resourceVersion]);
  });

  it('a bad selector is a 400', async () => {
    expect((await call('GET', '/api/v1/pods?fieldSelector=spec.bogus%3Dx')).json).toMatchObject({ code: 400, message: 'field label not supported: spec.bogus' });
  });
});

describe('watch', () => {
  it('without resourceVersion: synthetic ADDED for current objects, then live events', async () => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'w1' } });
    await call('POST', '/api/v1/namespaces/w1/pods', pod('existing'));
    const pending = watch('/api/v1/namespaces/w1/pods?watch=1', (ev) => ev.length >= 3);
    await new Promise((r) => setTimeout(r, 100));
    await call('POST', '/api/v1/namespaces/w1/pods', pod('live'));
    await call('DELETE', '/api/v1/namespaces/w1/pods/live');
    expect(names((await pending).events)).toEqual(['ADDED existing', 'ADDED live', 'DELETED live']);
  });

  it('from a resourceVersion: exactly the events after it, in order', async () => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'w2' } });
    const first = await call('POST', '/api/v1/namespaces/w2/pods', pod('p1'));
    const rv = (first.json['metadata'] as { resourceVersion: string }).resourceVersion;
    await call('POST', '/api/v1/namespaces/w2/pods', pod('p2'));
    await call('PATCH', '/api/v1/namespaces/w2/pods/p1', { metadata: { labels: { x: 'y' } } }, 'application/merge-patch+json');
    const { events } = await watch(`/api/v1/namespaces/w2/pods?watch=true&resourceVersion=${rv}`, (ev) => ev.length >= 2);
    expect(names(events)).toEqual(['ADDED p2', 'MODIFIED p1']);
    expect(Number(events[1]!.object.metadata.resourceVersion)).toBeGreaterThan(Number(events[0]!.object.metadata.resourceVersion));
  });

  it('a label selector turns moves in and out of it into ADDED and DELETED', async () => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'w3' } });
    await call('POST', '/api/v1/namespaces/w3/pods', pod('m', { app: 'db' }));
    const pending = watch('/api/v1/namespaces/w3/pods?watch=1&labelSelector=app%3Dweb', (ev) => ev.length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    await call('PATCH', '/api/v1/namespaces/w3/pods/m', { metadata: { labels: { app: 'web' } } }, 'application/merge-patch+json');
    await call('PATCH', '/api/v1/namespaces/w3/pods/m', { metadata: { labels: { app: 'db' } } }, 'application/merge-patch+json');
    expect(names((await pending).events)).toEqual(['ADDED m', 'DELETED m']);
  });

  it('allowWatchBookmarks sends BOOKMARKs carrying the latest resourceVersion', async () => {
    const { events } = await watch('/api/v1/nodes?watch=1&allowWatchBookmarks=true', (ev) => ev.some((e) => e.type === 'BOOKMARK'));
    const bookmark = events.find((e) => e.type === 'BOOKMARK')!;
    expect([bookmark.object.kind, Number(bookmark.object.metadata.resourceVersion)]).toEqual(['Node', sim.store.resourceVersion]);
  });

  it('sendInitialEvents ends the initial state with a k8s.io/initial-events-end bookmark', async () => {
    const { events } = await watch('/api/v1/namespaces?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true', (ev) => ev.some((e) => e.type === 'BOOKMARK'));
    const last = events[events.length - 1]!;
    expect([last.type, last.object.metadata.annotations]).toEqual(['BOOKMARK', { 'k8s.io/initial-events-end': 'true' }]);
    expect(events.slice(0, -1).every((e) => e.type === 'ADDED')).toBe(true);
  });

  it('timeoutSeconds ends the stream cleanly', async () => {
    const started = Date.now();
    const { ended } = await watch('/api/v1/services?watch=1&timeoutSeconds=1', () => false, 5000);
    expect(ended).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a resourceVersion older than the kept history is an HTTP 410 Expired Status', async () => {
    sim.store.compact();
    const { status, events } = await watch('/api/v1/pods?watch=1&resourceVersion=1', () => true);
    expect([status, events[0]!.object.reason, events[0]!.object.code]).toEqual([410, 'Expired', 410]);
  });

  it('compaction sends an ERROR 410 event into open watches and ends them', async () => {
    const pending = watch('/api/v1/endpoints?watch=1', (ev) => ev.some((e) => e.type === 'ERROR'));
    await new Promise((r) => setTimeout(r, 100));
    sim.store.compact();
    const { events } = await pending;
    expect(events.find((e) => e.type === 'ERROR')!.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });
});

describe('what the control plane writes: EndpointSlices, Events, Leases', () => {
  const sliceBody = (name: string, service: string, addresses: string[]) => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name, labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'slicemesh.io/publisher' } },
    addressType: 'IPv4', endpoints: addresses.map((ip) => ({ addresses: [ip], conditions: { ready: true } })), ports: [{ name: 'http', port: 8080 }],
  });
  const coreEvent = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1', kind: 'Event', metadata: { name },
    involvedObject: { kind: 'Service', namespace: 'cp', name: 'web', uid: 'u-web', apiVersion: 'v1' },
    reason: 'TopologyAwareHintsEnabled', message: 'Topology Aware Hints has been enabled', type: 'Normal',
    source: { component: 'endpoint-slice-controller' }, count: 1, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:00:00Z', ...extra,
  });
  const v1Event = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name },
    regarding: { kind: 'Service', namespace: 'cp', name: 'web', uid: 'u-web', apiVersion: 'v1' },
    reason: 'TopologyAwareHintsDisabled', note: 'Insufficient number of endpoints', type: 'Warning',
    eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'slicemesh.io/hints', reportingInstance: 'hints-0', action: 'Reconcile', ...extra,
  });
  const CORE = '/api/v1/namespaces/cp/events';
  const V1 = '/apis/events.k8s.io/v1/namespaces/cp/events';
  const itemNames = (json: Record<string, unknown>) => (json['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name);

  beforeAll(async () => {
    await call('POST', '/api/v1/namespaces', { metadata: { name: 'cp' } });
  });

  it('discovery lists events in core and events.k8s.io (short name ev), leases in coordination.k8s.io', async () => {
    const resources = async (path: string) => ((await call('GET', path)).json as { resources: { name: string; kind: string; namespaced: boolean; shortNames?: string[] }[] }).resources;
    expect((await resources('/api/v1')).find((r) => r.name === 'events')).toMatchObject({ kind: 'Event', namespaced: true, shortNames: ['ev'] });
    expect(await resources('/apis/events.k8s.io/v1')).toMatchObject([{ name: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] }]);
    expect(await resources('/apis/coordination.k8s.io/v1')).toMatchObject([{ name: 'leases', kind: 'Lease', namespaced: true }]);
  });

  it('EndpointSlices: create, list by service-name label, patch, delete (a Success Status)', async () => {
    const path = '/apis/discovery.k8s.io/v1/namespaces/cp/endpointslices';
    expect((await call('POST', path, sliceBody('web-a', 'web', ['10.244.0.5']))).status).toBe(201);
    await call('POST', path, sliceBody('db-a', 'db', ['10.244.0.9']));
    expect(itemNames((await call('GET', `${path}?labelSelector=kubernetes.io%2Fservice-name%3Dweb`)).json)).toEqual(['web-a']);
    const patched = await call('PATCH', `${path}/web-a`, { endpoints: [{ addresses: ['10.244.0.6'] }] }, 'application/merge-patch+json');
    expect([patched.status, patched.json['endpoints'], (patched.json['metadata'] as { generation: number }).generation]).toEqual([200, [{ addresses: ['10.244.0.6'] }], 2]);
    expect((await call('POST', path, { ...sliceBody('bad', 'web', ['fd00::1']) })).json).toMatchObject({ code: 422, message: 'EndpointSlice "bad" is invalid: endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address' });
    expect((await call('DELETE', `${path}/db-a`)).json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'db-a', group: 'discovery.k8s.io', kind: 'endpointslices' } });
  });

  it('EndpointSlices: a watch with the service-name selector sees only that service', async () => {
    const path = '/apis/discovery.k8s.io/v1/namespaces/cp/endpointslices';
    const pending = watch(`${path}?watch=1&labelSelector=kubernetes.io%2Fservice-name%3Dapi`, (ev) => ev.length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    await call('POST', path, sliceBody('other-a', 'other', ['10.244.1.1']));
    await call('POST', path, sliceBody('api-a', 'api', ['10.244.1.2']));
    await call('DELETE', `${path}/api-a`);
    expect(names((await pending).events)).toEqual(['ADDED api-a', 'DELETED api-a']);
  });

  it('Events: one store, two APIs; each shows its own field names', async () => {
    expect((await call('POST', CORE, coreEvent('web.old'))).status).toBe(201);
    expect((await call('POST', V1, v1Event('web.new'))).status).toBe(201);
    const asV1 = (await call('GET', `${V1}/web.old`)).json;
    expect(asV1).toMatchObject({ apiVersion: 'events.k8s.io/v1', regarding: { name: 'web' }, note: 'Topology Aware Hints has been enabled', deprecatedCount: 1, deprecatedSource: { component: 'endpoint-slice-controller' } });
    const asCore = (await call('GET', `${CORE}/web.new`)).json;
    expect(asCore).toMatchObject({ apiVersion: 'v1', involvedObject: { name: 'web' }, message: 'Insufficient number of endpoints', reportingComponent: 'slicemesh.io/hints', source: {}, firstTimestamp: null });
    expect(itemNames((await call('GET', V1)).json)).toEqual(['web.new', 'web.old']);
  });

  it('Events: the field selectors of kubectl describe (core) and of events.k8s.io clients', async () => {
    await call('POST', CORE, coreEvent('db.old', { involvedObject: { kind: 'Service', namespace: 'cp', name: 'db', uid: 'u-db' } }));
    const describe = 'fieldSelector=involvedObject.name%3Dweb,involvedObject.namespace%3Dcp,involvedObject.kind%3DService,involvedObject.uid%3Du-web&limit=500';
    expect(itemNames((await call('GET', `${CORE}?${describe}`)).json)).toEqual(['web.new', 'web.old']);
    expect(itemNames((await call('GET', `${V1}?fieldSelector=regarding.name%3Ddb`)).json)).toEqual(['db.old']);
    expect(itemNames((await call('GET', `/api/v1/events?fieldSelector=type%3DWarning`)).json)).toEqual(['web.new']);
    expect((await call('GET', `${V1}?fieldSelector=involvedObject.name%3Dweb`)).json).toMatchObject({ code: 400, message: 'field label not supported: involvedObject.name' });
  });

  it('Events: a watch through events.k8s.io gets events written through core, converted', async () => {
    const pending = watch(`${V1}?watch=1&resourceVersion=${sim.store.resourceVersion}`, (ev) => ev.length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    await call('POST', CORE, coreEvent('web.watched'));
    const { events } = await pending;
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { apiVersion: 'events.k8s.io/v1', note: 'Topology Aware Hints has been enabled', metadata: { name: 'web.watched' } } });
  });

  it('Events: a recorder\'s merge patch of count, PUT of a missing event creates it, DELETE is a Status', async () => {
    const patched = await call('PATCH', `${CORE}/web.old`, { count: 2, lastTimestamp: '2026-01-01T00:05:00Z' }, 'application/strategic-merge-patch+json');
    expect([patched.status, patched.json['count']]).toEqual([200, 2]);
    const series = await call('PATCH', `${V1}/web.new`, { series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' } }, 'application/merge-patch+json');
    expect([series.status, series.json['series']]).toEqual([200, { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' }]);
    expect((await call('PUT', `${CORE}/web.put`, coreEvent('web.put'))).status).toBe(201);
    expect((await call('DELETE', `${CORE}/web.put`)).json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'web.put', kind: 'events' } });
  });

  it('Events: upstream errors, named after the API used', async () => {
    const cases: readonly [string, string, unknown, number, string][] = [
      ['POST', CORE, coreEvent('x', { involvedObject: { kind: 'Service', namespace: 'other', name: 'web' } }), 422, 'Event "x" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
      ['POST', V1, v1Event('x', { note: 'n'.repeat(1025) }), 422, 'Event "x" is invalid: message: Invalid value: "": can have at most 1024 characters'],
      ['POST', V1, coreEvent('x'), 400, 'the API version in the data (v1) does not match the expected API version (events.k8s.io/v1)'],
      ['PATCH', `${V1}/web.new`, { note: 'changed' }, 422, 'Event "web.new" is invalid: message: Invalid value: "changed": field is immutable'],
      ['GET', `${V1}/nope`, undefined, 404, 'events.events.k8s.io "nope" not found'],
      ['DELETE', `${V1}/nope`, undefined, 404, 'events.events.k8s.io "nope" not found'],
      ['GET', `${CORE}/nope`, undefined, 404, 'events "nope" not found'],
    ];
    for (const [method, path, body, code, message] of cases) {
      const res = await call(method, path, body, method === 'PATCH' ? 'application/merge-patch+json' : 'application/json');
      expect([method, path, res.status, res.json['message']]).toEqual([method, path, code, message]);
    }
  });

  it('Leases: a stale renewal is 409 Conflict; the current resourceVersion wins', async () => {
    const path = '/apis/coordination.k8s.io/v1/namespaces/cp/leases';
    const spec = { holderIdentity: 'publisher-0', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 0 };
    const created = await call('POST', path, { metadata: { name: 'publisher' }, spec });
    expect([created.status, created.json['spec']]).toEqual([201, spec]);
    const renew = (from: Record<string, unknown>, holder: string) => call('PUT', `${path}/publisher`, { ...from, spec: { ...spec, holderIdentity: holder, renewTime: '2026-01-01T00:00:10.000000Z' } });
    const renewed = await renew(created.json, 'publisher-0');
    expect(renewed.status).toBe(200);
    expect((await renew(created.json, 'publisher-1')).json).toMatchObject({ code: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on leases.coordination.k8s.io "publisher": the object has been modified; please apply your changes to the latest version and try again' });
    expect((await call('GET', `${path}/publisher`)).json['spec']).toMatchObject({ holderIdentity: 'publisher-0' });
  });
});
