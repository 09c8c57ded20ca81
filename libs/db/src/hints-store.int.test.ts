import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { HintDecision } from './hints-store.ts';
import {
  deleteHintDecisions, deleteHintNodes, deleteHintServices, deleteHintSlices, loadHintDecisions,
  loadHintNodes, loadHintServices, loadHintSlices, saveHintDecisions, upsertHintNodes,
  upsertHintServices, upsertHintSlices,
} from './hints-store.ts';

let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });

const ep = (ip: string) => ({ addresses: [ip], conditions: { ready: true } });

describe('hint slices', () => {
  it('stores slices as received, replaces on re-upsert, filters by namespace/service and deletes by name', async () => {
    await t.db.transaction().execute((trx) => upsertHintSlices(trx, 'h1', deepFreeze([
      makeSlice('web-b', [ep('10.0.0.1')]),
      makeSlice('web-a', [ep('10.0.0.2')]),
      makeSlice('api-a', [ep('10.0.0.3')], { service: 'api' }),
      makeSlice('web-x', [ep('10.0.0.4')], { namespace: 'other' }),
    ])));
    await t.db.transaction().execute((trx) => upsertHintSlices(trx, 'h1', [makeSlice('web-a', [ep('10.0.0.9')])]));
    const web = await loadHintSlices(t.db, 'h1', { namespace: 'default', service: 'web' });
    expect(web.map((s) => [s.metadata.name, s.endpoints[0]?.addresses[0]])).toEqual([['web-a', '10.0.0.9'], ['web-b', '10.0.0.1']]);
    expect((await loadHintSlices(t.db, 'h1')).map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual(['default/api-a', 'default/web-a', 'default/web-b', 'other/web-x']);
    await t.db.transaction().execute((trx) => deleteHintSlices(trx, 'h1', 'default', ['web-a', 'missing']));
    expect((await loadHintSlices(t.db, 'h1', { namespace: 'default' })).map((s) => s.metadata.name)).toEqual(['api-a', 'web-b']);
    expect(await loadHintSlices(t.db, 'nothing-here')).toEqual([]);
  });
});

describe('hint decisions', () => {
  it('keeps one decision per service and address type; the latest save wins; delete removes all address types', async () => {
    const d = (o: Partial<HintDecision>): HintDecision => ({
      namespace: 'default', service: 'web', addressType: 'IPv4', enabled: true, mode: 'Auto', event: null, reason: 'hints set', decidedAt: new Date('2026-01-01T00:00:00Z'), ...o,
    });
    const disabled = { type: 'Warning' as const, reason: 'TopologyAwareHintsDisabled', message: 'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes' };
    await t.db.transaction().execute((trx) => saveHintDecisions(trx, 'h2', deepFreeze([d({}), d({ addressType: 'IPv6' }), d({ service: 'api' })])));
    await t.db.transaction().execute((trx) => saveHintDecisions(trx, 'h2', [d({ enabled: false, event: disabled, reason: 'insufficient node info', decidedAt: new Date('2026-01-02T00:00:00Z') })]));
    const web = await loadHintDecisions(t.db, 'h2', { namespace: 'default', service: 'web' });
    expect(web).toEqual([
      d({ enabled: false, event: disabled, reason: 'insufficient node info', decidedAt: new Date('2026-01-02T00:00:00Z') }),
      d({ addressType: 'IPv6' }),
    ]);
    await t.db.transaction().execute((trx) => deleteHintDecisions(trx, 'h2', 'default', 'web'));
    expect((await loadHintDecisions(t.db, 'h2')).map((x) => x.service)).toEqual(['api']);
  });
});

describe('hint nodes and services', () => {
  it('upserts, sorts and deletes nodes', async () => {
    await t.db.transaction().execute((trx) => upsertHintNodes(trx, 'h3', deepFreeze([makeNode('n2', { zone: 'a' }), makeNode('n1', { zone: 'b' })])));
    await t.db.transaction().execute((trx) => upsertHintNodes(trx, 'h3', [makeNode('n2', { zone: 'c' })]));
    expect((await loadHintNodes(t.db, 'h3')).map((n) => [n.metadata.name, n.metadata.labels?.['topology.kubernetes.io/zone']])).toEqual([['n1', 'b'], ['n2', 'c']]);
    await t.db.transaction().execute((trx) => deleteHintNodes(trx, 'h3', ['n1']));
    expect((await loadHintNodes(t.db, 'h3')).map((n) => n.metadata.name)).toEqual(['n2']);
  });

  it('upserts, filters by namespace and deletes services', async () => {
    await t.db.transaction().execute((trx) => upsertHintServices(trx, 'h4', deepFreeze([makeService('web'), makeService('api', { namespace: 'other' })])));
    expect((await loadHintServices(t.db, 'h4')).map((s) => s.metadata.name)).toEqual(['web', 'api']);
    expect((await loadHintServices(t.db, 'h4', 'other')).map((s) => s.metadata.name)).toEqual(['api']);
    await t.db.transaction().execute((trx) => deleteHintServices(trx, 'h4', [{ namespace: 'default', name: 'web' }]));
    expect((await loadHintServices(t.db, 'h4')).map((s) => s.metadata.name)).toEqual(['api']);
  });
});
