import { describe, expect, it } from 'vitest';
import { JsonTexts } from './shared-json.ts';

const slice = { metadata: { name: 's-1', annotations: { note: 'has "quotes" and \u0001 and \\ in it' } }, endpoints: [{ addresses: ['10.0.0.1'] }] };
const other = { metadata: { name: 's-2' }, endpoints: [] };

describe('JsonTexts', () => {
  it.each([
    { name: 'a message holding the object', value: { type: 'SliceChanged', upserts: [slice, other], deletes: ['x'] }, held: [slice] },
    { name: 'the object itself', value: slice, held: [slice] },
    { name: 'the object twice', value: [slice, { again: slice }], held: [slice] },
    { name: 'nothing held', value: { a: 1, b: [null, 'two'] }, held: [] },
    { name: 'held objects absent from the value', value: { a: other }, held: [slice] },
    { name: 'strings that look like placeholders', value: { s: '\u0001abc:0', t: slice }, held: [slice] },
    { name: 'undefined members and toJSON', value: { u: undefined, d: new Date(0), t: slice }, held: [slice] },
  ])('stringify equals JSON.stringify: $name', ({ value, held }) => {
    const texts = new JsonTexts();
    for (const h of held) texts.of(h);
    expect(texts.stringify(value)).toBe(JSON.stringify(value));
  });

  it('serialises each object once', () => {
    const texts = new JsonTexts();
    let calls = 0;
    const counted = {
      get n() {
        calls++;
        return 1;
      },
    };
    texts.of(counted);
    texts.of(counted);
    expect(texts.stringify({ a: counted, b: [counted] })).toBe('{"a":{"n":1},"b":[{"n":1}]}');
    expect(calls).toBe(1);
  });

  it.each([
    { name: 'fields and a value', fields: { namespace: 'ns', generation: 2 }, key: 'body', value: slice },
    { name: 'no fields', fields: {}, key: 'body', value: other },
  ])('objectWith equals JSON.stringify of the object: $name', ({ fields, key, value }) => {
    expect(new JsonTexts().objectWith(fields, key, value)).toBe(JSON.stringify({ ...fields, [key]: value }));
  });
});
