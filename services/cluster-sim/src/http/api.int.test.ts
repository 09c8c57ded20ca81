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
    expect(((await call('GET', '/apis')).json as { groups: { name: string }[] }).groups.map((g) => g.name)).toEqual(['discovery.k8s.io', 'coordination.k8s.io', 'events.k8s.io']);
    expect((await call('GET', '/version')).json).toMatchObject({ major: '1', minor: '32' });
    expect((await call('GET', '/openapi/v3')).json).toMatchObject({ paths: { 'api/v1': { serverRelativeURL: expect.stringMatching(/^\/openapi\/v3\/api\/v1\?hash=/) } } });
  });

  it('answers unknown paths with a 404 Status', async () => {
    expect((await call('GET', '/apis/apps/v1/deployments')).json).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
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
