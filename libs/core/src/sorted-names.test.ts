import { describe, expect, it } from 'vitest';
import { SortedByName } from './sorted-names.ts';

interface Item {
  readonly metadata: { readonly name: string };
  readonly v: number;
}
const item = (name: string, v = 0): Item => ({ metadata: { name }, v });

/** A list holding a, c, e (version 3), and the version to ask about. */
function abc(): { list: SortedByName<Item>; c: Item } {
  const list = new SortedByName<Item>();
  const c = item('c');
  for (const x of [item('a'), c, item('e')]) list.put(x);
  return { list, c };
}

describe('SortedByName', () => {
  it.each([
    { name: 'nothing since: no positions', act: () => {}, want: [] as number[] },
    { name: 'a replacement: its position', act: (l: SortedByName<Item>) => l.put(item('e', 1)), want: [2] },
    { name: 'two replacements of one item: the position twice', act: (l: SortedByName<Item>) => (l.put(item('a', 1)), l.put(item('a', 2))), want: [0, 0] },
    { name: 'an insert: positions moved (null)', act: (l: SortedByName<Item>) => l.put(item('b')), want: null },
    { name: 'a removal: positions moved (null)', act: (l: SortedByName<Item>) => l.remove('a'), want: null },
    { name: 'removing an absent name changes nothing', act: (l: SortedByName<Item>) => l.remove('zz'), want: [] },
  ])('replacedSince: $name', ({ act, want }) => {
    const { list } = abc();
    const since = list.version;
    act(list);
    expect(list.replacedSince(since)).toEqual(want);
    expect(list.view().map((x) => x.metadata.name)).toEqual([...list.view().map((x) => x.metadata.name)].sort());
  });

  it('putting the very object already held is not a change', () => {
    const { list, c } = abc();
    const since = list.version;
    list.put(c);
    expect(list.version).toBe(since);
  });

  it('replacements after an insert are reported from the insert on, not before it', () => {
    const { list } = abc();
    const before = list.version;
    list.put(item('b'));
    const after = list.version;
    list.put(item('c', 1));
    expect(list.replacedSince(before)).toBeNull();
    expect(list.replacedSince(after)).toEqual([2]);
  });

  it('forgets replacements past its journal: a version that old answers null, a recent one still answers', () => {
    const { list } = abc();
    const start = list.version;
    for (let k = 1; k <= 1500; k++) list.put(item('a', k));
    const recent = list.version - 3;
    expect(list.replacedSince(start)).toBeNull();
    expect(list.replacedSince(recent)).toEqual([0, 0, 0]);
    expect(list.replacedSince(list.version + 1)).toBeNull();
  });
});
