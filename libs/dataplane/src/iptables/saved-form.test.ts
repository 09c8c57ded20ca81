// savedForm against what iptables-save 1.8.9 (nf_tables) printed for rules the renderer wrote
// (copied from a real namespace; services/proxy-agent/src/restart.int.test.ts checks every
// rule kind against the kernel itself), and sameAsSaved's chain comparison.

import { describe, expect, it } from 'vitest';
import { ruleWords, sameAsSaved, savedForm } from './saved-form.ts';

describe('savedForm', () => {
  const cases: { name: string; rendered: string; saved: string; family?: 'IPv4' | 'IPv6' }[] = [
    {
      name: 'generic options move first, in -s -d -p order, addresses get /32',
      rendered: '-m comment --comment "bench/svc-0:http cluster IP" -m tcp -p tcp -d 10.96.0.10 --dport 80 ! -s 10.128.0.0/9 -j SLICEMESH-MARK-MASQ',
      saved: '! -s 10.128.0.0/9 -d 10.96.0.10/32 -p tcp -m comment --comment "bench/svc-0:http cluster IP" -m tcp --dport 80 -j SLICEMESH-MARK-MASQ',
    },
    { name: 'an endpoint DNAT keeps its target options', rendered: '-m tcp -p tcp -j DNAT --to-destination 10.128.12.54:8080', saved: '-p tcp -m tcp -j DNAT --to-destination 10.128.12.54:8080' },
    { name: 'IPv6 addresses get /128', rendered: '-s fd00::1 -j SLICEMESH-MARK-MASQ', saved: '-s fd00::1/128 -j SLICEMESH-MARK-MASQ', family: 'IPv6' },
    { name: 'a probability is printed as the kernel stores it, 11 decimals', rendered: '-m statistic --mode random --probability 0.2000000000 -j SLICEMESH-SEP-A', saved: '-m statistic --mode random --probability 0.20000000019 -j SLICEMESH-SEP-A' },
    { name: '--or-mark is saved as --set-xmark mark/mark', rendered: '-j MARK --or-mark 0x4000', saved: '-j MARK --set-xmark 0x4000/0x4000' },
    { name: '--xor-mark is saved as --set-xmark mark/0x0', rendered: '-j MARK --xor-mark 0x4000', saved: '-j MARK --set-xmark 0x4000/0x0' },
    { name: 'REJECT names its default reply', rendered: '-m tcp -p tcp -d 10.96.0.13 --dport 80 -j REJECT', saved: '-d 10.96.0.13/32 -p tcp -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable' },
    {
      name: 'recent options in libxt_recent order, default mask and side spelled out',
      rendered: '-m comment --comment "ns1/db:pg -> 10.180.1.1:5432" -m recent --name SLICEMESH-SEP-A --rcheck --seconds 10800 --reap -j SLICEMESH-SEP-A',
      saved: '-m comment --comment "ns1/db:pg -> 10.180.1.1:5432" -m recent --rcheck --seconds 10800 --reap --name SLICEMESH-SEP-A --mask 255.255.255.255 --rsource -j SLICEMESH-SEP-A',
    },
    {
      name: 'recent --set before the tcp match stays before it',
      rendered: '-m comment --comment ns1/db:pg -m recent --name SLICEMESH-SEP-A --set -m tcp -p tcp -j DNAT --to-destination 10.180.1.1:5432',
      saved: '-p tcp -m comment --comment ns1/db:pg -m recent --set --name SLICEMESH-SEP-A --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.180.1.1:5432',
    },
    { name: 'a rule already in saved form is unchanged', rendered: '-m mark ! --mark 0x4000/0x4000 -j RETURN', saved: '-m mark ! --mark 0x4000/0x4000 -j RETURN' },
  ];
  for (const tc of cases) it(tc.name, () => expect(savedForm(tc.rendered, tc.family ?? 'IPv4')).toEqual(ruleWords(tc.saved)));
});

describe('sameAsSaved', () => {
  const rendered = ['-A SLICEMESH-SEP-A -s 10.1.0.1 -j SLICEMESH-MARK-MASQ', '-A SLICEMESH-SEP-A -m tcp -p tcp -j DNAT --to-destination 10.1.0.1:80'];
  const saved = ['-s 10.1.0.1/32 -j SLICEMESH-MARK-MASQ', '-p tcp -m tcp -j DNAT --to-destination 10.1.0.1:80'];
  const cases: { name: string; saved: string[]; want: boolean }[] = [
    { name: 'the same rules in the same order', saved, want: true },
    { name: 'the same rules in another order', saved: [...saved].reverse(), want: false },
    { name: 'one rule more in the kernel', saved: [...saved, '-j RETURN'], want: false },
    { name: 'another endpoint port', saved: [saved[0] ?? '', '-p tcp -m tcp -j DNAT --to-destination 10.1.0.1:81'], want: false },
    { name: 'an empty chain', saved: [], want: false },
  ];
  for (const tc of cases) it(`${tc.name}: ${tc.want}`, () => expect(sameAsSaved(rendered, tc.saved, 'IPv4')).toBe(tc.want));
});
