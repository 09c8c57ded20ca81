import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepFreeze, makePod } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import { listDirty, markDirty } from './dirty-services.ts';
import type { KubeObjectRow } from './object-store.ts';
import { loadObject, upsertObjects } from './object-store.ts';
import { advanceOffset, getOffset, isApplied } from './offsets.ts';
import type { Trx } from './schema.ts';

let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });

describe('consumer offsets', () => {
  it('an unknown consumer is at 0', async () => {
    expect(await getOffset(t.db, 'never-ran')).toBe(0);
  });

  const cases = [
    { name: 'moves forward to a higher sequence', steps: [5, 9], moved: [true, true], final: 9 },
    { name: 'never moves backwards (an older seq leaves it alone)', steps: [9, 5], moved: [true, false], final: 9 },
    { name: 'the same seq again does not move it', steps: [7, 7], moved: [true, false], final: 7 },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const consumer = `c-${tc.name}`;
      const moved: boolean[] = [];
      for (const s of tc.steps) moved.push(await t.db.transaction().execute((trx) => advanceOffset(trx, consumer, s)));
      expect(moved).toEqual(tc.moved);
      expect(await getOffset(t.db, consumer)).toBe(tc.final);
      expect(await isApplied(t.db, consumer, tc.final)).toBe(true);
      expect(await isApplied(t.db, consumer, tc.final + 1)).toBe(false);
    });
  }

  it('rolls back with the projection write it guards', async () => {
    await t.db.transaction().execute(async (trx) => {
      await advanceOffset(trx, 'rollback', 3);
      throw new Error('boom');
    }).catch(() => {});
    expect(await getOffset(t.db, 'rollback')).toBe(0);
  });
});

describe('redelivery', () => {
  // How a slicer consumer applies one KUBE message: offset check, projection, dirty mark, offset.
  async function apply(trx: Trx, consumer: string, seq: number, row: KubeObjectRow): Promise<'applied' | 'redelivery'> {
    if (await isApplied(trx, consumer, seq)) return 'redelivery';
    const changed = await upsertObjects(trx, [row]);
    if (changed.length > 0) await markDirty(trx, [{ cluster: row.cluster, namespace: row.namespace, name: 'web' }], seq);
    await advanceOffset(trx, consumer, seq);
    return 'applied';
  }

  it('applying the same message twice changes nothing the second time', async () => {
    const row: KubeObjectRow = deepFreeze({
      cluster: 'redeliver', kind: 'Pod', namespace: 'default', name: 'p1', uid: 'u1', resourceVersion: '100', deleted: false, body: makePod('p1'), kubeSeq: 41,
    });
    expect(await t.db.transaction().execute((trx) => apply(trx, 'slicer-0', 41, row))).toBe('applied');
    const before = { obj: await loadObject(t.db, row), dirty: await listDirty(t.db), offset: await getOffset(t.db, 'slicer-0') };
    expect(before.dirty).toEqual([{ cluster: 'redeliver', namespace: 'default', name: 'web', sinceSeq: 41, lastSeq: 41 }]);

    expect(await t.db.transaction().execute((trx) => apply(trx, 'slicer-0', 41, row))).toBe('redelivery');
    expect({ obj: await loadObject(t.db, row), dirty: await listDirty(t.db), offset: await getOffset(t.db, 'slicer-0') }).toEqual(before);
  });
});
