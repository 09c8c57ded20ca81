import { describe, expect, it } from 'vitest';
import { svcKey, viewKey } from '@slicemesh/nats';
import { splitServiceKey, svcKeyIndex, viewKeyIndex } from './published-index.ts';

const k = (zone: string, service: string, slice: string) => viewKey({ cluster: 'c1', zone, namespace: 'ns', service, slice });

describe('KeyIndex', () => {
  it('groups keys by service and forgets a service with its last key', () => {
    const idx = viewKeyIndex();
    idx.set(k('a', 'web', 's1'), { revision: 1, digest: 'd1' });
    idx.set(k('b', 'web', 's1'), { revision: 2, digest: 'd2' });
    idx.set(k('a', 'api', 's9'), { revision: 3, digest: 'd3' });
    expect(idx.services()).toEqual(['ns/api', 'ns/web']);
    expect([...idx.forService('ns/web').keys()]).toEqual([k('a', 'web', 's1'), k('b', 'web', 's1')]);
    idx.delete(k('a', 'api', 's9'));
    expect(idx.services()).toEqual(['ns/web']);
    expect(idx.forService('ns/api').size).toBe(0);
  });

  it('forService returns a copy', () => {
    const idx = svcKeyIndex();
    const key = svcKey({ cluster: 'c1', namespace: 'ns', name: 'web' });
    idx.set(key, { revision: 1, digest: 'd' });
    idx.forService('ns/web').clear();
    expect(idx.get(key)).toEqual({ revision: 1, digest: 'd' });
  });

  const cases: { name: string; recorded: [string, number][]; inBucket: [string, number][]; want: [string, number][]; changed: number }[] = [
    { name: 'record and bucket agree: nothing changes', recorded: [[k('a', 'web', 's'), 4]], inBucket: [[k('a', 'web', 's'), 4]], want: [[k('a', 'web', 's'), 4]], changed: 0 },
    { name: 'a recorded key missing from the bucket becomes unconfirmed (re-put)', recorded: [[k('a', 'web', 's'), 4]], inBucket: [], want: [[k('a', 'web', 's'), 0]], changed: 1 },
    { name: 'a bucket key never recorded becomes unconfirmed (deleted unless wanted)', recorded: [], inBucket: [[k('b', 'web', 's'), 7]], want: [[k('b', 'web', 's'), 0]], changed: 1 },
    { name: 'an already unconfirmed key stays so without counting', recorded: [[k('a', 'web', 's'), 0]], inBucket: [], want: [[k('a', 'web', 's'), 0]], changed: 0 },
    {
      name: 'a key the bucket holds at a newer revision than recorded (a put never confirmed) becomes unconfirmed',
      recorded: [[k('a', 'web', 's'), 4], [k('b', 'web', 's'), 5]], inBucket: [[k('a', 'web', 's'), 9], [k('b', 'web', 's'), 5]],
      want: [[k('a', 'web', 's'), 0], [k('b', 'web', 's'), 5]], changed: 1,
    },
  ];
  for (const tc of cases) {
    it(`auditAgainst: ${tc.name}`, () => {
      const idx = viewKeyIndex();
      for (const [key, revision] of tc.recorded) idx.set(key, { revision, digest: revision > 0 ? 'd' : null });
      expect(idx.auditAgainst(new Map(tc.inBucket))).toBe(tc.changed);
      expect(idx.keys().map((key) => [key, idx.get(key)?.revision])).toEqual(tc.want);
    });
  }

  it('rejects keys that are not of its bucket', () => {
    expect(() => viewKeyIndex().set('c1.ns.web', { revision: 1, digest: null })).toThrow();
  });
});

describe('splitServiceKey', () => {
  it('splits at the first slash', () => {
    expect(splitServiceKey('ns/web')).toEqual({ namespace: 'ns', name: 'web' });
    expect(splitServiceKey('web')).toEqual({ namespace: '', name: 'web' });
  });
});
