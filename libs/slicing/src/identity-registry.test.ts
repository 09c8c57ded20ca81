import { describe, expect, it } from 'vitest';
import { IdentityRegistry } from './identity-registry.ts';
import type { RegistryEntry } from './identity-registry.ts';

class Entry implements RegistryEntry {
  readonly key: string;
  public mark: number;
  epoch = 0;
  constructor(
    key: string,
    mark: number,
  ) {
    this.key = key;
    this.mark = mark;
  }
}

const keys = (r: IdentityRegistry<Entry>): string[] => r.sorted.map((e) => e.key);
const many = (n: number, stamp: number, prefix = 'k'): Entry[] => Array.from({ length: n }, (_, i) => new Entry(`${prefix}${String(i).padStart(4, '0')}`, stamp));

interface Case {
  readonly name: string;
  /** Returns what was observed and what the rule expects. */
  readonly run: () => { got: unknown; want: unknown };
}

// Small admissions (<= 16) are put one by one; larger ones are merged: most rules are checked
// on both paths.
const cases: readonly Case[] = [
  {
    name: 'admitted entries are held and listed in identity order (put path)',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const fresh = [new Entry('c', 1), new Entry('a', 1), new Entry('b', 1)];
      const ok = r.admit(fresh, 1, 3);
      return { got: [ok, keys(r), fresh.every((e) => r.holds(e))], want: [true, ['a', 'b', 'c'], true] };
    },
  },
  {
    name: 'admitted entries are held and listed in identity order (merge path)',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const fresh = many(40, 1).reverse();
      const ok = r.admit(fresh, 1, 40);
      return { got: [ok, keys(r), fresh.every((e) => r.holds(e))], want: [true, many(40, 1).map((e) => e.key), true] };
    },
  },
  {
    name: 'admit sorts the fresh list itself (leftovers are read from it in order)',
    run: () => {
      const fresh = [new Entry('b', 1), new Entry('a', 1)];
      new IdentityRegistry<Entry>().admit(fresh, 1, 2);
      return { got: fresh.map((e) => e.key), want: ['a', 'b'] };
    },
  },
  {
    name: 'an identity whose holder is no longer wanted is taken over',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const old = new Entry('a', 1);
      r.admit([old], 1, 1);
      const next = new Entry('a', 2);
      const ok = r.admit([next], 2, 1);
      return { got: [ok, r.holds(old), r.holds(next), r.find('a') === next], want: [true, false, true, true] };
    },
  },
  {
    name: 'two fresh entries with one identity are reported (put path)',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const ok = r.admit([new Entry('a', 1), new Entry('a', 1), new Entry('b', 1)], 1, 3);
      return { got: [ok, keys(r)], want: [false, ['a', 'b']] };
    },
  },
  {
    name: 'two fresh entries with one identity are reported (merge path)',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const ok = r.admit([...many(20, 1), new Entry('k0003', 1)], 1, 21);
      return { got: [ok, keys(r).length], want: [false, 20] };
    },
  },
  {
    name: 'a fresh entry sharing the identity of a held, still wanted one is reported (put path)',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const held = new Entry('a', 1);
      r.admit([held], 1, 1);
      held.mark = 2;
      return { got: r.admit([new Entry('a', 2)], 2, 2), want: false };
    },
  },
  {
    name: 'a fresh entry sharing the identity of a held, still wanted one is reported (merge path)',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const held = many(30, 1);
      r.admit([...held], 1, 30);
      for (const e of held) e.mark = 2;
      return { got: r.admit([...many(20, 2, 'x'), new Entry('k0007', 2)], 2, 51), want: false };
    },
  },
  {
    name: 'merging keeps the held entries still wanted and drops the rest',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const first = many(30, 1);
      r.admit([...first], 1, 30);
      const still = first.filter((_, i) => i % 6 === 0);
      for (const e of still) e.mark = 2;
      const fresh = many(20, 2, 'x');
      const ok = r.admit(fresh, 2, still.length + fresh.length);
      return {
        got: [ok, keys(r), first.filter((e) => r.holds(e)).length],
        want: [true, [...still, ...fresh].map((e) => e.key).sort(), still.length],
      };
    },
  },
  {
    name: 'holders no longer wanted are pruned once they outnumber the wanted ones',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const first = many(3000, 1);
      r.admit([...first], 1, 3000);
      for (const e of first.slice(0, 5)) e.mark = 2;
      r.admit([], 2, 5);
      return { got: [keys(r), r.holds(first[10] as Entry)], want: [first.slice(0, 5).map((e) => e.key), false] };
    },
  },
  {
    name: 'a few unwanted holders are kept (no rebuild for a pod change)',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const first = many(10, 1);
      r.admit([...first], 1, 10);
      for (const e of first.slice(1)) e.mark = 2;
      r.admit([], 2, 9);
      return { got: r.holds(first[0] as Entry), want: true };
    },
  },
  {
    name: 'find returns the holder of an identity, whatever the order of lookups, and nothing for unknown ones',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const all = many(50, 1);
      r.admit([...all], 1, 50);
      r.admit([new Entry('k0010x', 2)], 2, 1); // an insert between two holders
      const order = ['k0003', 'k0004', 'k0010x', 'k0011', 'k0002', 'k0049', 'k0000', 'nope', 'k0010'];
      return { got: order.map((k) => r.find(k)?.key), want: order.map((k) => (k === 'nope' ? undefined : k)) };
    },
  },
  {
    name: 'clear forgets every holder',
    run: () => {
      const r = new IdentityRegistry<Entry>();
      const e = new Entry('a', 1);
      r.admit([e], 1, 1);
      r.clear();
      return { got: [r.holds(e), r.find('a'), keys(r)], want: [false, undefined, []] };
    },
  },
  {
    name: 'an entry held by one registry is not held by another',
    run: () => {
      const a = new IdentityRegistry<Entry>();
      const b = new IdentityRegistry<Entry>();
      const e = new Entry('a', 1);
      a.admit([e], 1, 1);
      return { got: [a.holds(e), b.holds(e)], want: [true, false] };
    },
  },
];

describe('IdentityRegistry', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const { got, want } = tc.run();
      expect(got).toEqual(want);
    });
  }
});
