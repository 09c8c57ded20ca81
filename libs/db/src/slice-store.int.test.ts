import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { SliceChanges } from './slice-store.ts';
import { applySliceChanges, deterministicSliceUid, loadSlices } from './slice-store.ts';

let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });

const ep = (ip: string) => ({ addresses: [ip], conditions: { ready: true } });
const withoutUid = (s: EndpointSlice): EndpointSlice => {
  const { uid: _uid, generation: _gen, ...metadata } = s.metadata;
  return { ...s, metadata };
};
const apply = (changes: Partial<SliceChanges> & { cluster: string }) =>
  t.db.transaction().execute((trx) => applySliceChanges(trx, deepFreeze({ create: [], update: [], delete: [], ...changes })));

describe('applySliceChanges', () => {
  it('a created slice gets generation 1 in the column and the body, and a deterministic uid when it has none', async () => {
    const s = withoutUid(makeSlice('web-abc', [ep('10.0.0.1')]));
    const out = await apply({ cluster: 'gen1', create: [s] });
    const uid = deterministicSliceUid('gen1', 'default', 'web-abc');
    expect(out.created).toEqual([{ ...s, metadata: { ...s.metadata, uid, generation: 1 } }]);
    expect(out.updated).toEqual([]);
    expect(await loadSlices(t.db, 'gen1', 'default', 'web')).toEqual(out.created);
    const col = await t.db.selectFrom('endpoint_slices').select(['generation', 'service', 'managed_by', 'address_type']).where('cluster', '=', 'gen1').executeTakeFirst();
    expect(col).toEqual({ generation: 1, service: 'web', managed_by: 'endpointslice-controller.k8s.io', address_type: 'IPv4' });
  });

  it('each update increments the stored generation, whatever generation the input carries', async () => {
    const s = makeSlice('web-1', [ep('10.0.0.1')], { generation: 1 });
    await apply({ cluster: 'gen2', create: [s] });
    const u1 = await apply({ cluster: 'gen2', update: [makeSlice('web-1', [ep('10.0.0.2')], { generation: 1 })] });
    const u2 = await apply({ cluster: 'gen2', update: [makeSlice('web-1', [ep('10.0.0.3')], { generation: 7 })] });
    expect(u1.updated.map((x) => x.metadata.generation)).toEqual([2]);
    expect(u2.updated.map((x) => x.metadata.generation)).toEqual([3]);
    const [stored] = await loadSlices(t.db, 'gen2', 'default', 'web');
    expect(stored?.metadata.generation).toBe(3);
    expect(stored?.endpoints).toEqual([ep('10.0.0.3')]);
    expect(stored?.metadata.uid).toBe('uid-slice-web-1');
  });

  it('deletes run first and return the stored bodies; deleting a missing slice returns nothing', async () => {
    await apply({ cluster: 'del', create: [makeSlice('web-a', [ep('10.0.0.1')]), makeSlice('web-b', [ep('10.0.0.2')])] });
    const out = await apply({ cluster: 'del', delete: [makeSlice('web-b', []), makeSlice('web-zzz', [])] });
    expect(out.deleted.map((s) => [s.metadata.name, s.endpoints])).toEqual([['web-b', [ep('10.0.0.2')]]]);
    expect((await loadSlices(t.db, 'del', 'default', 'web')).map((s) => s.metadata.name)).toEqual(['web-a']);
  });

  it('loadSlices returns every managed-by of the service, sorted by name, and nothing of other services or clusters', async () => {
    await apply({
      cluster: 'load',
      create: [
        makeSlice('web-z', [ep('10.0.0.1')]),
        makeSlice('web-m', [ep('10.0.0.2')], { managedBy: MANAGED_BY_MIRRORING }),
        makeSlice('api-a', [ep('10.0.0.3')], { service: 'api' }),
      ],
    });
    await apply({ cluster: 'load-other', create: [makeSlice('web-q', [ep('10.0.0.4')])] });
    const got = await loadSlices(t.db, 'load', 'default', 'web');
    expect(got.map((s) => [s.metadata.name, s.metadata.labels?.[LABEL_MANAGED_BY]])).toEqual([
      ['web-m', MANAGED_BY_MIRRORING],
      ['web-z', 'endpointslice-controller.k8s.io'],
    ]);
    expect(await loadSlices(t.db, 'load', 'default', 'none')).toEqual([]);
  });

  it('an empty change set writes nothing and returns empty lists', async () => {
    expect(await apply({ cluster: 'empty' })).toEqual({ created: [], updated: [], deleted: [] });
  });

  const invalid = [
    { name: 'rejects a slice without a name (plan not finalized)', slice: { ...makeSlice('', []), metadata: { ...makeSlice('', []).metadata, generateName: 'web-' } }, error: /metadata.name is empty/ },
    { name: 'rejects a slice without the service-name label', slice: { ...makeSlice('x', []), metadata: { ...makeSlice('x', []).metadata, labels: { [LABEL_MANAGED_BY]: 'm' } } }, error: new RegExp(`label ${LABEL_SERVICE_NAME} is missing`) },
    { name: 'rejects a slice without a namespace', slice: { ...makeSlice('x', []), metadata: { ...makeSlice('x', []).metadata, namespace: undefined } }, error: /metadata.namespace is missing/ },
  ];
  for (const tc of invalid) {
    it(tc.name, async () => {
      await expect(apply({ cluster: 'bad', create: [tc.slice as EndpointSlice] })).rejects.toThrow(tc.error);
    });
  }

  it('rejects the same slice twice in one change set and writes nothing', async () => {
    const s = makeSlice('web-dup', [ep('10.0.0.1')]);
    await expect(apply({ cluster: 'dup', create: [s], update: [s] })).rejects.toThrow(/appears twice/);
    expect(await loadSlices(t.db, 'dup', 'default', 'web')).toEqual([]);
  });
});
