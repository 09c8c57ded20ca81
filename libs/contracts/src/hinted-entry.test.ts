import { describe, expect, it } from 'vitest';
import { validateEndpointSlice } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import { hintedStreamFilter, kvStreamOf, parseHintedEntry } from './hinted-entry.ts';
import { hintedKey } from './subjects.ts';

const ctx = deepFreeze({ bucket: 'hinted', cluster: 'c1' });
const slice = deepFreeze(makeSlice('web-abc', [{ addresses: ['10.0.0.1'], conditions: { ready: true } }]));
const subj = (key: string) => `$KV.hinted.${key}`;
const KEY = hintedKey({ cluster: 'c1', namespace: 'default', service: 'web', slice: 'web-abc' });

describe('parseHintedEntry', () => {
  it('a put gives the slice with its address', () => {
    const r = parseHintedEntry(subj(KEY), slice, {}, ctx);
    expect(r).toEqual({ ok: true, value: { cluster: 'c1', namespace: 'default', service: 'web', name: 'web-abc', slice: validateEndpointSlice(slice, 'value') } });
  });

  for (const op of ['DEL', 'PURGE']) {
    it(`a ${op} marker is a delete of the key's slice`, () => {
      expect(parseHintedEntry(subj(KEY), undefined, { 'KV-Operation': op }, ctx)).toEqual({ ok: true, value: { cluster: 'c1', namespace: 'default', service: 'web', name: 'web-abc', slice: null } });
    });
  }

  const rejected = [
    { name: 'another bucket', subject: `$KV.views.${KEY}`, data: slice, field: 'subject' },
    { name: 'a key of another cluster', subject: subj(hintedKey({ cluster: 'c2', namespace: 'default', service: 'web', slice: 'web-abc' })), data: slice, field: 'subject' },
    { name: 'a view key (five tokens)', subject: subj('c1.zone-a.default.web.web-abc'), data: slice, field: 'subject' },
    { name: 'a value that is not a slice', subject: subj(KEY), data: { kind: 'Pod' }, field: undefined },
    { name: 'a slice of another namespace', subject: subj(KEY), data: makeSlice('web-abc', [], { namespace: 'shop' }), field: 'value.metadata.namespace' },
    { name: 'a slice of another name', subject: subj(KEY), data: makeSlice('web-xyz', []), field: 'value.metadata.name' },
    { name: 'a slice of another service', subject: subj(KEY), data: makeSlice('web-abc', [], { service: 'api' }), field: 'value.metadata.labels["kubernetes.io/service-name"]' },
  ];
  for (const tc of rejected) {
    it(`rejects ${tc.name}`, () => {
      const r = parseHintedEntry(tc.subject, tc.data, {}, ctx);
      expect(r.ok).toBe(false);
      if (!r.ok && tc.field !== undefined) expect(r.rejection.field).toBe(tc.field);
      if (!r.ok) expect(r.rejection.reason).not.toBe('');
    });
  }

  it('names the stream and the filter of one cluster', () => {
    expect([kvStreamOf('hinted'), hintedStreamFilter('hinted', 'c1')]).toEqual(['KV_hinted', '$KV.hinted.c1.>']);
  });
});
