import { describe, expect, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import { isNewerResourceVersion, supersedes } from './object-store.ts';

describe('supersedes (the JS twin of the SQL version guard)', () => {
  const cases = [
    { name: 'a newer version wins', incoming: { resourceVersion: '11', deleted: false }, stored: { resourceVersion: '10', deleted: false }, want: true },
    { name: 'an older version loses', incoming: { resourceVersion: '9', deleted: true }, stored: { resourceVersion: '10', deleted: false }, want: false },
    { name: 'a delete at the live version wins', incoming: { resourceVersion: '10', deleted: true }, stored: { resourceVersion: '10', deleted: false }, want: true },
    { name: 'an upsert at the tombstone version loses', incoming: { resourceVersion: '10', deleted: false }, stored: { resourceVersion: '10', deleted: true }, want: false },
    { name: 'the same delete twice loses', incoming: { resourceVersion: '10', deleted: true }, stored: { resourceVersion: '10', deleted: true }, want: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(supersedes(deepFreeze(tc.incoming), deepFreeze(tc.stored))).toBe(tc.want));
});

describe('isNewerResourceVersion', () => {
  const cases = [
    { name: 'integers compare numerically (10 > 9, though "10" < "9" as text)', incoming: '10', stored: '9', want: true },
    { name: 'an older integer is not newer', incoming: '9', stored: '10', want: false },
    { name: 'the same integer is not newer', incoming: '42', stored: '42', want: false },
    { name: 'integers beyond 2^53 still compare exactly', incoming: '9007199254740993', stored: '9007199254740992', want: true },
    { name: 'opaque versions: any different value counts as newer', incoming: 'b', stored: 'a', want: true },
    { name: 'opaque versions: equal is not newer', incoming: 'abc', stored: 'abc', want: false },
    { name: 'mixed integer and opaque: different counts as newer', incoming: '5', stored: 'x5', want: true },
  ];
  for (const tc of cases) it(tc.name, () => expect(isNewerResourceVersion(tc.incoming, tc.stored)).toBe(tc.want));
});
