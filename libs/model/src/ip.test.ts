import { describe, expect, it } from 'vitest';
import { prng } from '@slicemesh/testing';
import { canonicalIP, ipFamilyOf } from './ip.ts';

describe('canonicalIP', () => {
  const cases: { name: string; input: string; want: string | null; family?: string }[] = [
    { name: 'keeps a plain IPv4 address', input: '10.0.0.1', want: '10.0.0.1', family: 'IPv4' },
    { name: 'accepts leading zeros in IPv4 like ParseIPSloppy', input: '010.000.0.01', want: '10.0.0.1' },
    { name: 'rejects an IPv4 octet over 255', input: '10.0.0.256', want: null },
    { name: 'rejects three IPv4 octets', input: '10.0.1', want: null },
    { name: 'shortens zero groups not in the longest run (semantics A.2.4)', input: '1234::5678:0000:0000:9abc:def1', want: '1234::5678:0:0:9abc:def1', family: 'IPv6' },
    { name: 'compresses the longest zero run', input: '2001:db8:0:0:0:0:2:1', want: '2001:db8::2:1' },
    { name: 'compresses the first of two equal runs', input: '2001:0:0:1:0:0:0:1', want: '2001:0:0:1::1' },
    { name: 'does not compress a single zero group', input: '2001:db8:0:1:1:1:1:1', want: '2001:db8:0:1:1:1:1:1' },
    { name: 'lowercases hex', input: 'FD00::ABCD', want: 'fd00::abcd' },
    { name: 'prints the unspecified address as ::', input: '0:0:0:0:0:0:0:0', want: '::' },
    { name: 'treats an IPv4-mapped address as IPv4', input: '::ffff:192.168.1.2', want: '192.168.1.2', family: 'IPv4' },
    { name: 'accepts an embedded IPv4 tail', input: '64:ff9b::192.0.2.33', want: '64:ff9b::c000:221' },
    { name: 'rejects two double colons', input: '1::2::3', want: null },
    { name: 'rejects a zone index', input: 'fe80::1%eth0', want: null },
    { name: 'rejects a hostname', input: 'example.com', want: null },
    { name: 'rejects the empty string', input: '', want: null },
    { name: 'rejects nine groups', input: '1:2:3:4:5:6:7:8:9', want: null },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(canonicalIP(tc.input)).toBe(tc.want);
      if (tc.family) expect(ipFamilyOf(tc.input)).toBe(tc.family);
    });
  }
});

describe('IPv4 parsing', () => {
  // The split-and-regex rule the character loop replaced, kept as the reference.
  const reference = (s: string): string | null => {
    const parts = s.split('.');
    if (parts.length !== 4 || !parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255)) return null;
    return parts.map(Number).join('.');
  };

  it.each(['1.2.3.4', '0.0.0.0', '255.255.255.255', '001.002.003.004', '1.2.3.4.', '.1.2.3.4', '1..2.3', '1.2.3', '1.2.3.4.5', '1234.1.1.1', '256.1.1.1', '1.2.3.-4', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.0x1', '١.2.3.4'])('agrees with the reference rule: %s', (s) => {
    expect(canonicalIP(s)).toBe(reference(s));
  });

  it('agrees with the reference rule on 20000 random strings of digits and dots', () => {
    const rnd = prng(8);
    const alphabet = '0123456789.....2551x';
    for (let n = 0; n < 20_000; n++) {
      const s = Array.from({ length: Math.floor(rnd() * 17) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
      expect(canonicalIP(s), s).toBe(s.length === 0 ? null : reference(s));
    }
  });
});
