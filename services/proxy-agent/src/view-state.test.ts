import type { KvChange } from '@slicemesh/nats';
import { svcKey, viewKey } from '@slicemesh/nats';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { del, endpoint, service, slice, svcPut, viewPut } from './test-support.ts';
import { ViewState, triggerTimeOf } from './view-state.ts';

const C = 'c1';
const Z = 'zone-a';
const rev = (c: Omit<KvChange, 'revision'>): KvChange => deepFreeze({ ...c, revision: 1 });
const newState = () => new ViewState({ cluster: C, view: Z, nodeName: 'node-a1', family: 'IPv4' });

const web = service('web', '10.96.0.10');
const s1 = slice('web-1', 'web', [endpoint('10.244.1.2', { node: 'node-a1' })]);
const s1b = slice('web-1', 'web', [endpoint('10.244.1.2', { node: 'node-a1' }), endpoint('10.244.1.3')]);

describe('ViewState ingestion', () => {
  type Step = { bucket: 'svc' | 'views'; change: Omit<KvChange, 'revision'>; want: string };
  const cases: { name: string; steps: Step[] }[] = [
    {
      name: 'D.2.2 an update equal to what is held is a no-op (the runner is not woken)',
      steps: [
        { bucket: 'views', change: viewPut(C, Z, s1), want: 'changed default/web' },
        { bucket: 'views', change: viewPut(C, Z, s1), want: 'unchanged default/web' },
        { bucket: 'views', change: viewPut(C, Z, s1b), want: 'changed default/web' },
      ],
    },
    {
      name: 'D.2.2 deleting a slice is a change; deleting an unknown key is not',
      steps: [
        { bucket: 'views', change: viewPut(C, Z, s1), want: 'changed default/web' },
        { bucket: 'views', change: del(viewKey({ cluster: C, zone: Z, namespace: 'default', service: 'web', slice: 'web-1' })), want: 'changed default/web' },
        { bucket: 'views', change: del(viewKey({ cluster: C, zone: Z, namespace: 'default', service: 'web', slice: 'web-1' })), want: 'unchanged -' },
      ],
    },
    {
      name: 'D.2.1 a slice of the other family is accepted but changes nothing for this proxy',
      steps: [{ bucket: 'views', change: viewPut(C, Z, { ...slice('web-6', 'web', [endpoint('fd00::1')]), addressType: 'IPv6' }), want: 'unchanged default/web' }],
    },
    {
      name: 'habit 2: a re-put while a change is pending still reports it; added then deleted before a sync ends where it began (no-op)',
      steps: [
        { bucket: 'svc', change: svcPut(C, web), want: 'changed default/web' },
        { bucket: 'svc', change: svcPut(C, web), want: 'changed default/web' },
        { bucket: 'svc', change: del(svcKey({ cluster: C, namespace: 'default', name: 'web' })), want: 'unchanged default/web' },
      ],
    },
    {
      name: 'entries of another view, another cluster, or with mismatched identity are rejected',
      steps: [
        { bucket: 'views', change: viewPut(C, 'zone-b', s1), want: 'rejected' },
        { bucket: 'views', change: viewPut('c2', Z, s1), want: 'rejected' },
        { bucket: 'views', change: { ...viewPut(C, Z, s1), key: viewKey({ cluster: C, zone: Z, namespace: 'default', service: 'web', slice: 'other' }) }, want: 'rejected' },
        { bucket: 'svc', change: { ...svcPut(C, web), key: svcKey({ cluster: C, namespace: 'default', name: 'api' }) }, want: 'rejected' },
        { bucket: 'svc', change: { key: svcKey({ cluster: C, namespace: 'default', name: 'x' }), op: 'PUT', value: undefined, parseError: 'Unexpected token' }, want: 'rejected' },
        { bucket: 'svc', change: { key: svcKey({ cluster: C, namespace: 'default', name: 'x' }), op: 'PUT', value: { kind: 'Service', metadata: { name: 'x' }, spec: { ports: [{ port: 0 }] } } }, want: 'rejected' },
      ],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const st = newState();
      const got = tc.steps.map((s) => {
        const o = s.bucket === 'svc' ? st.applyService(rev(s.change)) : st.applyView(rev(s.change));
        return o.kind === 'rejected' ? 'rejected' : `${o.kind} ${o.service ?? '-'}`;
      });
      expect(got).toEqual(tc.steps.map((s) => s.want));
    });
  }

  it('rejections say why', () => {
    const o = newState().applyView(rev(viewPut(C, 'zone-b', s1)));
    expect(o).toEqual({ kind: 'rejected', reason: expect.stringContaining('not in view c1/zone-a') });
  });
});

describe('ViewState.checkout', () => {
  it('D.2.8 hands out the changed services once, with change counts and trigger times', () => {
    const st = newState();
    st.applyService(rev(svcPut(C, web)));
    st.applyView(rev(viewPut(C, Z, slice('web-1', 'web', [endpoint('10.244.1.2')], { triggerTime: '2026-01-01T00:00:05Z' }))));
    st.applyView(rev(viewPut(C, Z, slice('api-1', 'api', [endpoint('10.244.1.9')]))));
    expect(st.hasPendingChanges()).toBe(true);
    const co = st.checkout();
    expect([...co.changedServices]).toEqual(['default/api', 'default/web']);
    expect([co.serviceChanges, co.endpointChanges]).toEqual([1, 2]);
    expect(co.triggerTimes).toEqual(new Map([['default/web', [Date.parse('2026-01-01T00:00:05Z')]]]));
    expect(st.hasPendingChanges()).toBe(false);
    expect([...st.checkout().changedServices]).toEqual([]);
  });

  it('trigger times of a failed sync come back for the next one', () => {
    const st = newState();
    st.applyView(rev(viewPut(C, Z, slice('web-1', 'web', [endpoint('10.244.1.2')], { triggerTime: '2026-01-01T00:00:05Z' }))));
    const co = st.checkout();
    st.restoreTriggerTimes(co.triggerTimes);
    expect(st.checkout().triggerTimes).toEqual(co.triggerTimes);
  });

  it('keeps the services and their view slices by name', () => {
    const st = newState();
    st.applyService(rev(svcPut(C, web)));
    st.applyView(rev(viewPut(C, Z, slice('web-2', 'web', [endpoint('10.244.1.4')]))));
    st.applyView(rev(viewPut(C, Z, s1)));
    expect(st.serviceKeys()).toEqual(['default/web']);
    expect(st.slicesOf('default/web').map((s) => s.metadata.name)).toEqual(['web-1', 'web-2']);
    expect(st.slicesOf('default/none')).toEqual([]);
  });
});

describe('ViewState.retainOnly', () => {
  it('after a re-watch, drops the keys its initial set no longer holds', () => {
    const st = newState();
    const a = viewPut(C, Z, s1);
    const b = viewPut(C, Z, slice('web-2', 'web', [endpoint('10.244.1.4')]));
    st.applyView(rev(a));
    st.applyView(rev(b));
    st.checkout();
    const out = st.retainOnly('views', new Set([a.key]));
    expect(out.map((o) => o.kind)).toEqual(['changed']);
    expect(st.slicesOf('default/web').map((s) => s.metadata.name)).toEqual(['web-1']);
    expect(st.retainOnly('svc', new Set())).toEqual([]);
  });
});

describe('ViewState.replaceViews (a zone move)', () => {
  it('drops every entry of the old view and takes the new view\'s initial set in one step; its entries parse against the new zone', () => {
    const st = newState();
    st.applyService(rev(svcPut(C, web)));
    st.applyView(rev(viewPut(C, Z, s1)));
    st.checkout();
    const moved = slice('web-1', 'web', [endpoint('10.244.2.7', { zone: 'zone-b' })], { triggerTime: '2026-01-01T00:00:05Z' });
    const out = st.replaceViews('zone-b', [rev(viewPut(C, 'zone-b', moved))]);
    expect(out.map((o) => o.kind)).toEqual(['changed', 'changed']);
    expect(st.view).toBe('zone-b');
    expect(st.slicesOf('default/web').map((s) => s.endpoints.map((e) => e.addresses[0]))).toEqual([['10.244.2.7']]);
    // The old zone's keys no longer parse; the new zone's do.
    expect(st.applyView(rev(viewPut(C, Z, s1b)))).toMatchObject({ kind: 'rejected' });
    expect(st.applyView(rev(viewPut(C, 'zone-b', s1b)))).toMatchObject({ kind: 'changed' });
  });

  it('records no trigger times for the slices it moves in (a move changes no endpoint), and keeps those already pending', () => {
    const st = newState();
    st.applyView(rev(viewPut(C, Z, slice('web-1', 'web', [endpoint('10.244.1.2')], { triggerTime: '2026-01-01T00:00:01Z' }))));
    st.replaceViews('zone-b', [rev(viewPut(C, 'zone-b', slice('web-1', 'web', [endpoint('10.244.2.2')], { triggerTime: '2026-01-01T00:00:09Z' })))]);
    expect([...st.checkout().triggerTimes]).toEqual([['default/web', [Date.parse('2026-01-01T00:00:01Z')]]]);
  });

  it('an entry of the new set that does not parse is reported and left out', () => {
    const st = newState();
    const out = st.replaceViews('zone-b', [rev(viewPut(C, 'zone-c', s1))]);
    expect(out).toEqual([{ kind: 'rejected', reason: expect.stringContaining('not in view') as unknown }]);
    expect(st.slicesOf('default/web')).toEqual([]);
  });
});

describe('triggerTimeOf', () => {
  const cases = [
    { name: 'reads the RFC 3339 annotation', s: slice('a', 'web', [], { triggerTime: '2026-01-01T00:00:05Z' }), want: Date.parse('2026-01-01T00:00:05Z') },
    { name: 'no annotation: none', s: slice('a', 'web', []), want: null },
    { name: 'an unparsable annotation: none', s: slice('a', 'web', [], { triggerTime: 'yesterday' }), want: null },
  ];
  for (const tc of cases) it(tc.name, () => expect(triggerTimeOf(deepFreeze(tc.s))).toBe(tc.want));
});
