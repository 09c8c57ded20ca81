import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import { advanceOffset, getOffset, isApplied } from './offsets.ts';

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
