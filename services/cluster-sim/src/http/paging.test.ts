import { describe, expect, it } from 'vitest';
import type { KubeObj } from '../store/types.ts';
import { decodeContinue, pageOf } from './paging.ts';

const objs: KubeObj[] = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' } }));
const names = (items: readonly KubeObj[]) => items.map((o) => o.metadata.name);

describe('pageOf', () => {
  it('without a limit returns everything at the current version', () => {
    const page = pageOf(objs, 10, 0, undefined, undefined);
    expect([names(page.items), page.resourceVersion, page.continueToken]).toEqual([['a', 'b', 'c', 'd', 'e'], '10', undefined]);
  });

  it('pages carry the first page version and the remaining count; the last page has no token', () => {
    const first = pageOf(objs, 10, 0, 2, undefined);
    expect([names(first.items), first.remainingItemCount]).toEqual([['a', 'b'], 3]);
    const second = pageOf(objs, 15, 0, 2, first.continueToken);
    expect([names(second.items), second.resourceVersion, second.remainingItemCount]).toEqual([['c', 'd'], '10', 1]);
    const last = pageOf(objs, 20, 0, 2, second.continueToken);
    expect([names(last.items), last.continueToken, last.resourceVersion]).toEqual([['e'], undefined, '10']);
  });

  it('a continue token older than the retained history is 410 Expired', () => {
    const first = pageOf(objs, 10, 0, 2, undefined);
    expect(() => pageOf(objs, 30, 11, 2, first.continueToken)).toThrow('too old');
  });

  it('continues after the last returned key even if it was deleted meanwhile', () => {
    const first = pageOf(objs, 10, 0, 2, undefined);
    expect(names(pageOf(objs.filter((o) => o.metadata.name !== 'b'), 12, 0, 2, first.continueToken).items)).toEqual(['c', 'd']);
  });

  it('rejects a malformed token with a 400', () => {
    expect(() => decodeContinue('not-a-token')).toThrow('continue key is not valid');
  });
});
