import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import { loadReconciles, recordReconcile } from './reconcile-log.ts';

let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });

describe('reconcile log', () => {
  it('records the consumed KUBE range and counts, in id order per service', async () => {
    const base = { cluster: 'c', namespace: 'default', service: 'web' };
    const at = new Date('2026-01-01T00:00:00Z');
    const id1 = await t.db.transaction().execute((trx) => recordReconcile(trx, { ...base, kubeSeqFrom: 1, kubeSeqTo: 5, reconcileId: 'r1', created: 2, updated: 0, deleted: 0, at }));
    const id2 = await t.db.transaction().execute((trx) => recordReconcile(trx, { ...base, kubeSeqFrom: 6, kubeSeqTo: 9, reconcileId: 'r2', created: 0, updated: 1, deleted: 1 }));
    await t.db.transaction().execute((trx) => recordReconcile(trx, { ...base, service: 'api', kubeSeqFrom: 1, kubeSeqTo: 1, reconcileId: 'r3', created: 1, updated: 0, deleted: 0 }));
    expect(id2).toBeGreaterThan(id1);
    const got = await loadReconciles(t.db, 'c', 'default', 'web');
    expect(got.map(({ at: _at, ...r }) => r)).toEqual([
      { id: id1, ...base, kubeSeqFrom: 1, kubeSeqTo: 5, reconcileId: 'r1', created: 2, updated: 0, deleted: 0, settings: null },
      { id: id2, ...base, kubeSeqFrom: 6, kubeSeqTo: 9, reconcileId: 'r2', created: 0, updated: 1, deleted: 1, settings: null },
    ]);
    expect(got[0]?.at).toEqual(at);
    expect(got[1]?.at).toBeInstanceOf(Date);
  });

  it('a service never reconciled has no records', async () => {
    expect(await loadReconciles(t.db, 'c', 'default', 'never')).toEqual([]);
  });
});
