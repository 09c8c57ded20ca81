import { describe, expect, it } from 'vitest';
import { generateNamePrefix, sliceName } from './slice-name.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('sliceName', () => {
  it('is a function of owner and origin only', () => {
    expect(sliceName('web', 'u1', 'IPv4/k', new Set())).toBe(sliceName('web', 'u1', 'IPv4/k', new Set()));
  });
  it('differs for a different origin or owner uid', () => {
    const a = sliceName('web', 'u1', 'IPv4/k', new Set());
    expect(sliceName('web', 'u1', 'IPv6/k', new Set())).not.toBe(a);
    expect(sliceName('web', 'u2', 'IPv4/k', new Set())).not.toBe(a);
  });
  it('skips names already taken, deterministically', () => {
    const first = sliceName('web', 'u1', 'o', new Set());
    const second = sliceName('web', 'u1', 'o', new Set([first]));
    expect(second).not.toBe(first);
    expect(sliceName('web', 'u1', 'o', new Set([first]))).toBe(second);
  });
  const names = [
    { name: 'keeps a short owner name', owner: 'web' },
    { name: 'keeps dots of a subdomain owner', owner: 'a.b.c' },
    { name: 'trims a 253-character owner so the suffix fits', owner: 'a'.repeat(253) },
    { name: 'drops a trailing dash or dot before the suffix', owner: `${'b'.repeat(241)}.-` },
  ];
  for (const tc of names) {
    it(`${tc.name} and yields a valid DNS subdomain`, () => {
      const n = sliceName(tc.owner, 'uid', 'IPv4/x', new Set());
      expect(n.length).toBeLessThanOrEqual(253);
      expect(n).toMatch(DNS_SUBDOMAIN);
      expect(n.startsWith(generateNamePrefix(tc.owner))).toBe(true);
    });
  }
});
