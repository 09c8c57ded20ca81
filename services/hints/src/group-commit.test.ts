import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.ts';

/** A write that records its batches and finishes when told to. */
function recorder(fail?: (items: readonly number[]) => boolean) {
  const batches: number[][] = [];
  const waiting: (() => void)[] = [];
  const write = (items: readonly number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push([...items]);
      waiting.push(() => (fail?.(items) ? reject(new Error(`write of ${items.join(',')} failed`)) : resolve()));
    });
  const finishNext = async () => {
    while (waiting.length === 0) await new Promise((r) => setImmediate(r));
    waiting.shift()?.();
  };
  return { batches, write, finishNext };
}

describe('GroupCommit', () => {
  it('items submitted in the same turn go out in one write', async () => {
    const r = recorder();
    const gc = new GroupCommit<number>(r.write);
    const done = Promise.all([gc.submit(1), gc.submit(2), gc.submit(3)]);
    await r.finishNext();
    await done;
    expect(r.batches).toEqual([[1, 2, 3]]);
  });

  it('items submitted while a write runs wait for it and go out together in the next one', async () => {
    const r = recorder();
    const gc = new GroupCommit<number>(r.write);
    const first = gc.submit(1);
    await new Promise((res) => setImmediate(res));
    const later = Promise.all([gc.submit(2), gc.submit(3)]);
    expect(r.batches).toEqual([[1]]);
    await r.finishNext();
    await first;
    await r.finishNext();
    await later;
    expect(r.batches).toEqual([[1], [2, 3]]);
  });

  it('a failed write rejects every item it carried, and the next batch still goes out', async () => {
    const r = recorder((items) => items.includes(1));
    const gc = new GroupCommit<number>(r.write);
    const a = gc.submit(1);
    const b = gc.submit(2);
    await r.finishNext();
    await expect(a).rejects.toThrow(/write of 1,2 failed/);
    await expect(b).rejects.toThrow(/write of 1,2 failed/);
    const c = gc.submit(3);
    await r.finishNext();
    await expect(c).resolves.toBeUndefined();
  });
});
