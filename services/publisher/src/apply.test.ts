// The apply loop against an in-memory API on a fake clock: conflicts, API errors, Retry-After,
// the QPS/burst limit, shadow mode, and replays that change nothing.
import { describe, expect, it } from 'vitest';
import { KubeWriteError } from '@slicemesh/kube';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { FakeClock, settle } from '@slicemesh/runtime';
import { makeSlice } from '@slicemesh/testing';
import type { ApplyDeps, ApplyEvent, PublisherMode } from './apply.ts';
import { ConflictsExhaustedError, StoppedError, applyAction, applyActions, rateLimitedApi } from './apply.ts';
import type { SliceAction } from './decide.ts';
import { writableSlice } from './decide.ts';
import { FakeSliceApi } from './fake-api.ts';

const OWNED = new Set([MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING]);
const slice = (name: string, ip = '10.0.0.1'): EndpointSlice => makeSlice(name, [{ addresses: [ip], conditions: { ready: true } }]);
const upsert = (s: EndpointSlice, seq = 1): SliceAction => ({ type: 'upsert', namespace: 'default', name: s.metadata.name, seq, slice: s });
const del = (name: string, seq = 1): SliceAction => ({ type: 'delete', namespace: 'default', name, seq });

function setup(o: { mode?: PublisherMode; maxConflicts?: number; signal?: AbortSignal } = {}) {
  const api = new FakeSliceApi();
  const clock = new FakeClock(0);
  const events: ApplyEvent[] = [];
  const deps: ApplyDeps = { api, owned: OWNED, mode: o.mode ?? 'write', clock, maxConflicts: o.maxConflicts ?? 8, onEvent: (e) => events.push(e), ...(o.signal ? { signal: o.signal } : {}) };
  return { api, clock, events, deps };
}

/** Runs `p` to completion, moving the fake clock to each timer it waits for. */
async function drive<T>(clock: FakeClock, p: Promise<T>): Promise<T> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  for (let i = 0; !done && i < 100_000; i++) {
    await settle();
    const at = clock.nextTimerAt();
    if (!done && at !== undefined) await clock.advanceAsync(Math.max(0, at - clock.now()));
  }
  return p;
}

const foreign = (name: string, manager: string | null = 'my-controller') => {
  const body = writableSlice(slice(name, '10.9.9.9')) as Record<string, unknown> & { metadata: Record<string, unknown> };
  const labels = { ...(body.metadata['labels'] as Record<string, string>) };
  if (manager === null) delete labels[LABEL_MANAGED_BY];
  else labels[LABEL_MANAGED_BY] = manager;
  return { ...body, metadata: { ...body.metadata, labels } };
};

describe('applyActions', () => {
  it('creates, updates and deletes; the same actions again write nothing', async () => {
    const { api, clock, deps } = setup();
    api.put(writableSlice(slice('b')));
    api.put(writableSlice(slice('c')));
    const actions = [upsert(slice('a')), upsert(slice('b', '10.0.0.2')), del('c')];
    const first = await drive(clock, applyActions(deps, actions));
    expect(first.map((r) => r.outcome)).toEqual(['created', 'updated', 'deleted']);
    expect(api.writes().sort()).toEqual(['create default/a', 'delete default/c', 'replace default/b']);
    api.calls.length = 0;
    const again = await drive(clock, applyActions(deps, actions));
    expect(again.map((r) => r.outcome)).toEqual(['unchanged', 'unchanged', 'gone']);
    expect(api.writes()).toEqual([]);
  });

  it('a replace that meets a newer resourceVersion (409) reads again and wins', async () => {
    const { api, clock, deps, events } = setup();
    api.put(writableSlice(slice('a')));
    api.next('replace', { before: () => api.touch('default/a', (o) => ({ ...o, endpoints: [{ addresses: ['10.0.0.99'], conditions: {} }] })) });
    const r = await drive(clock, applyAction(deps, upsert(slice('a', '10.0.0.3'))));
    expect(r).toMatchObject({ outcome: 'updated', conflicts: 1 });
    expect(api.calls).toEqual(['get default/a', 'replace default/a', 'get default/a', 'replace default/a']);
    expect((api.objects.get('default/a')?.['endpoints'] as { addresses: string[] }[])[0]?.addresses).toEqual(['10.0.0.3']);
    expect(events).toEqual([expect.objectContaining({ type: 'conflict', decision: 'update', statusCode: 409 })]);
  });

  it('a create that meets AlreadyExists reads again; a foreign slice that appeared meanwhile is left alone', async () => {
    const { api, clock, deps } = setup();
    api.next('create', { before: () => api.put(foreign('a')) });
    const r = await drive(clock, applyAction(deps, upsert(slice('a'))));
    expect(r).toMatchObject({ outcome: 'foreign', conflicts: 1 });
    expect(api.objects.get('default/a')?.metadata['labels']).toMatchObject({ [LABEL_MANAGED_BY]: 'my-controller' });
  });

  it('a replace of a slice deleted meanwhile (404) reads again and creates it', async () => {
    const { api, clock, deps } = setup();
    api.put(writableSlice(slice('a')));
    api.next('replace', { before: () => api.objects.delete('default/a') });
    const r = await drive(clock, applyAction(deps, upsert(slice('a', '10.0.0.4'))));
    expect(r.outcome).toBe('created');
    expect(api.writes()).toEqual(['replace default/a', 'create default/a']);
  });

  it('a delete whose precondition fails (409) reads again and deletes what is there now', async () => {
    const { api, clock, deps } = setup();
    api.put(writableSlice(slice('a')));
    api.next('delete', { before: () => api.touch('default/a') });
    expect((await drive(clock, applyAction(deps, del('a')))).outcome).toBe('deleted');
    expect(api.objects.has('default/a')).toBe(false);
  });

  it('foreign and unlabelled slices are neither updated nor deleted', async () => {
    const { api, clock, deps } = setup();
    api.put(foreign('f1'));
    api.put(foreign('f2', null));
    const before = structuredClone([...api.objects.entries()]);
    const rs = await drive(clock, applyActions(deps, [upsert(slice('f1')), del('f2'), del('f1'), upsert(slice('f2'))]));
    expect(rs.map((r) => r.outcome)).toEqual(['foreign', 'foreign', 'foreign', 'foreign']);
    expect(api.writes()).toEqual([]);
    expect([...api.objects.entries()]).toEqual(before);
  });

  it('422 Invalid is reported once with the API message and the next slice still goes through', async () => {
    const { api, clock, deps } = setup();
    api.next('create', { fail: new KubeWriteError('create', '/x', 422, 'Invalid', 'EndpointSlice.discovery.k8s.io "a" is invalid: endpoints[0].addresses[0]: Invalid value') });
    const rs = await drive(clock, applyActions({ ...deps, concurrency: 1 }, [upsert(slice('a')), upsert(slice('b'))]));
    expect(rs.map((r) => r.outcome)).toEqual(['invalid', 'created']);
    expect(rs[0]?.error?.apiMessage).toContain('is invalid');
    expect(api.calls.filter((c) => c === 'create default/a')).toHaveLength(1);
  });

  it('404 on create (the namespace is gone) is rejected, not retried', async () => {
    const { api, clock, deps } = setup();
    api.next('create', { fail: new KubeWriteError('create', '/x', 404, 'NotFound', 'namespaces "default" not found') });
    expect((await drive(clock, applyAction(deps, upsert(slice('a'))))).outcome).toBe('rejected');
  });

  it('429 waits for Retry-After, 503 without it backs off, then the write goes through', async () => {
    const { api, clock, deps, events } = setup();
    api.next('create', { fail: new KubeWriteError('create', '/x', 429, 'TooManyRequests', 'slow down', 3000) });
    api.next('create', { fail: new KubeWriteError('create', '/x', 503, 'ServiceUnavailable', 'etcd leader changed') });
    const r = await drive(clock, applyAction(deps, upsert(slice('a'))));
    expect(r.outcome).toBe('created');
    expect(events.filter((e) => e.type === 'retry').map((e) => [e.statusCode, (e as { waitMs: number }).waitMs])).toEqual([[429, 3000], [503, 400]]);
    expect(clock.now()).toBe(3400);
  });

  it('no answer at all (status 0) is retried on a get too', async () => {
    const { api, clock, deps } = setup();
    api.next('get', { fail: new KubeWriteError('get', '/x', 0, '', 'connect ECONNREFUSED') });
    expect((await drive(clock, applyAction(deps, upsert(slice('a'))))).outcome).toBe('created');
    expect(api.calls.filter((c) => c.startsWith('get'))).toHaveLength(2);
  });

  it('a slice that keeps conflicting fails the batch after maxConflicts reads', async () => {
    const { api, clock, deps } = setup({ maxConflicts: 3 });
    api.put(writableSlice(slice('a')));
    for (let i = 0; i < 5; i++) api.next('replace', { before: () => api.touch('default/a') });
    await expect(drive(clock, applyAction(deps, upsert(slice('a', '10.0.0.8'))))).rejects.toBeInstanceOf(ConflictsExhaustedError);
    expect(api.calls.filter((c) => c.startsWith('replace'))).toHaveLength(3);
  });

  it('a slice of ours still terminating is waited for, then created', async () => {
    const { api, clock, deps } = setup();
    api.put({ ...writableSlice(slice('a')), metadata: { ...(writableSlice(slice('a'))['metadata'] as object), deletionTimestamp: '2026-01-01T00:00:00Z' } });
    api.next('get', { before: () => undefined });
    api.next('get', { before: () => api.objects.delete('default/a') });
    const r = await drive(clock, applyAction(deps, upsert(slice('a'))));
    expect(r).toMatchObject({ outcome: 'created', conflicts: 1 });
  });

  it('shadow mode reads and counts but writes nothing', async () => {
    const { api, clock, deps } = setup({ mode: 'shadow' });
    api.put(writableSlice(slice('b')));
    api.put(writableSlice(slice('c')));
    api.put(foreign('f'));
    const rs = await drive(clock, applyActions(deps, [upsert(slice('a')), upsert(slice('b', '10.0.0.2')), del('c'), upsert(slice('f'))]));
    expect(rs.map((r) => r.outcome)).toEqual(['would-create', 'would-update', 'would-delete', 'foreign']);
    expect(api.writes()).toEqual([]);
  });

  it('a namespace with many actions is read with one paged list instead of a GET each', async () => {
    const { api, clock, deps } = setup();
    for (let i = 0; i < 10; i++) api.put(writableSlice(slice(`s${i}`)));
    api.put(foreign('s10'));
    const actions = Array.from({ length: 20 }, (_, i) => upsert(slice(`s${i}`)));
    const rs = await drive(clock, applyActions({ ...deps, listThreshold: 16, listPageSize: 4 }, actions));
    expect(rs.map((r) => r.outcome)).toEqual([...Array<string>(10).fill('unchanged'), 'foreign', ...Array<string>(9).fill('created')]);
    expect(api.calls.filter((c) => c.startsWith('get'))).toEqual([]);
    expect(api.calls.filter((c) => c.startsWith('list'))).toEqual(['list default', 'list default from 4', 'list default from 8']);
  });

  it('after a list, a conflict reads the slice again with a GET', async () => {
    const { api, clock, deps } = setup();
    api.put(writableSlice(slice('a')));
    api.next('replace', { before: () => api.touch('default/a') });
    const rs = await drive(clock, applyActions({ ...deps, listThreshold: 1 }, [upsert(slice('a', '10.0.0.9'))]));
    expect(rs[0]).toMatchObject({ outcome: 'updated', conflicts: 1 });
    expect(api.calls).toEqual(['list default', 'replace default/a', 'get default/a', 'replace default/a']);
  });

  for (const [code, reason] of [[410, 'Expired'], [403, 'Forbidden']] as const) {
    it(`a list the API refuses with ${code} ${reason} falls back to GETs at once`, async () => {
      const { api, clock, deps } = setup();
      api.next('list', { fail: new KubeWriteError('list', '/x', code, reason, 'no') });
      const rs = await drive(clock, applyActions({ ...deps, listThreshold: 1 }, [upsert(slice('a')), upsert(slice('b'))]));
      expect(rs.map((r) => r.outcome)).toEqual(['created', 'created']);
      expect(api.calls.filter((c) => c.startsWith('list'))).toHaveLength(1);
      expect(api.calls.filter((c) => c.startsWith('get'))).toHaveLength(2);
    });
  }

  it('a list that meets a 503 is retried', async () => {
    const { api, clock, deps } = setup();
    api.next('list', { fail: new KubeWriteError('list', '/x', 503, 'ServiceUnavailable', 'later') });
    await drive(clock, applyActions({ ...deps, listThreshold: 1 }, [upsert(slice('a'))]));
    expect(api.calls.filter((c) => c.startsWith('list'))).toHaveLength(2);
    expect(api.calls.filter((c) => c.startsWith('get'))).toHaveLength(0);
  });

  it('stopping during a retry wait rejects with StoppedError', async () => {
    const stop = new AbortController();
    const { api, clock, deps } = setup({ signal: stop.signal });
    api.next('get', { fail: new KubeWriteError('get', '/x', 500, 'InternalError', 'boom') });
    const p = applyAction(deps, upsert(slice('a')));
    await settle();
    expect(clock.pending()).toBe(1);
    stop.abort();
    await expect(p).rejects.toBeInstanceOf(StoppedError);
  });
});

describe('rateLimitedApi', () => {
  for (const { n, qps, burst } of [{ n: 50, qps: 10, burst: 5 }, { n: 100, qps: 20, burst: 30 }, { n: 10, qps: 5, burst: 20 }]) {
    it(`${n} requests at qps ${qps}, burst ${burst} take (n - burst) / qps seconds`, async () => {
      const api = new FakeSliceApi();
      const clock = new FakeClock(0);
      let waitedMs = 0;
      const limited = rateLimitedApi(api, { qps, burst, clock, onWait: (ms) => (waitedMs += ms) });
      const times: number[] = [];
      const all = Promise.all(Array.from({ length: n }, async (_, i) => {
        await limited.create(writableSlice(slice(`s${i}`)));
        times.push(clock.now());
      }));
      await drive(clock, all);
      const expectedMs = (Math.max(0, n - burst) / qps) * 1000;
      expect(Math.max(...times)).toBeGreaterThanOrEqual(expectedMs - 1e-6);
      expect(Math.max(...times)).toBeLessThanOrEqual(expectedMs + 1);
      expect(times.filter((t) => t === 0)).toHaveLength(Math.min(n, burst));
      expect(api.writes()).toHaveLength(n);
      expect(waitedMs > 0).toBe(n > burst);
    });
  }

  it('holds across the apply loop: every get and write takes a token', async () => {
    const api = new FakeSliceApi();
    const clock = new FakeClock(0);
    const deps: ApplyDeps = { api: rateLimitedApi(api, { qps: 10, burst: 2, clock }), owned: OWNED, mode: 'write', clock, concurrency: 4 };
    const rs = await drive(clock, applyActions(deps, Array.from({ length: 10 }, (_, i) => upsert(slice(`s${i}`)))));
    expect(rs.every((r) => r.outcome === 'created')).toBe(true);
    // 20 requests (a get and a create each), 2 free: 18 / 10 qps.
    expect(clock.now()).toBeGreaterThanOrEqual(1800 - 1e-6);
  });
});

describe('FakeSliceApi (the fake used above)', () => {
  it('refuses a stale replace, a taken name and a delete whose preconditions fail, as the API does', async () => {
    const api = new FakeSliceApi();
    const a = await api.create(writableSlice(slice('a')));
    const meta = a['metadata'] as Record<string, unknown>;
    await expect(api.create(writableSlice(slice('a')))).rejects.toMatchObject({ statusCode: 409, reason: 'AlreadyExists' });
    const next = await api.replace({ ...a, endpoints: [] });
    await expect(api.replace({ ...a, endpoints: [] })).rejects.toMatchObject({ statusCode: 409, reason: 'Conflict' });
    await expect(api.delete('default', 'a', { uid: String(meta['uid']), resourceVersion: String(meta['resourceVersion']) })).rejects.toMatchObject({ statusCode: 409 });
    const nextMeta = next['metadata'] as Record<string, unknown>;
    await api.delete('default', 'a', { uid: String(nextMeta['uid']), resourceVersion: String(nextMeta['resourceVersion']) });
    await expect(api.delete('default', 'a', { uid: 'x', resourceVersion: '1' })).rejects.toMatchObject({ statusCode: 404 });
    await expect(api.replace({ ...a })).rejects.toMatchObject({ statusCode: 404 });
  });
});
