import { describe, expect, it } from 'vitest';
import { KubeWriteError, parseRetryAfter, slicePath } from './slice-api.ts';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const cases: readonly (readonly [string | undefined, number | undefined])[] = [
    [undefined, undefined],
    ['', undefined],
    ['3', 3000],
    [' 0 ', 0],
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5000],
    ['Wed, 31 Dec 2025 23:59:00 GMT', 0],
    ['soon', undefined],
  ];
  for (const [value, ms] of cases) {
    it(`${JSON.stringify(value)} → ${ms}`, () => {
      expect(parseRetryAfter(value, now)).toBe(ms);
    });
  }
});

describe('KubeWriteError', () => {
  it('says verb, path, status, reason and the message', () => {
    const e = new KubeWriteError('replace', '/p', 409, 'Conflict', 'the object has been modified');
    expect(e.message).toBe('replace /p: 409 Conflict: the object has been modified');
    expect(new KubeWriteError('get', '/p', 0, '', 'connect ECONNREFUSED').message).toBe('get /p: connect ECONNREFUSED');
  });
});

describe('slicePath', () => {
  it('escapes names', () => {
    expect(slicePath('ns', 'a b')).toBe('/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices/a%20b');
  });
});
