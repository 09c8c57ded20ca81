// The nftables tracer and `nft -f` simulator on hand-written rules.

import { describe, expect, it } from 'vitest';
import { applyNft, dumpNft } from './nft-sim.ts';
import { describeTrace } from './trace-result.ts';
import { traceNftables } from './trace-nftables.ts';

const SCRIPT = `add table ip t
add chain ip t pre { type nat hook prerouting priority -100 ; }
add chain ip t out { type nat hook output priority -100 ; }
add chain ip t fpre { type filter hook prerouting priority -110 ; }
add chain ip t fwd { type filter hook forward priority -110 ; }
add chain ip t post { type nat hook postrouting priority 100 ; }
add chain ip t svc
add chain ip t ep1
add chain ip t ep2
add chain ip t masq
add chain ip t guard
add set ip t aff2 { type ipv4_addr ; flags dynamic,timeout ; timeout 60s ; }
add set ip t blocked { type ipv4_addr ; }
add map ip t dispatch { type ipv4_addr . inet_proto . inet_service : verdict ; }
add rule ip t pre ip daddr . meta l4proto . th dport vmap @dispatch
add rule ip t out ip daddr . meta l4proto . th dport vmap @dispatch
add rule ip t fpre ct state new jump guard
add rule ip t guard ip saddr @blocked drop
add rule ip t guard ip daddr 10.9.0.1 tcp dport 80 reject comment "closed"
add rule ip t fwd ip daddr 10.1.0.9 drop
add rule ip t post mark and 0x4000 == 0 return
add rule ip t post mark set mark xor 0x4000
add rule ip t post masquerade fully-random
add rule ip t masq mark set mark or 0x4000
add rule ip t svc ip saddr != { 10.0.0.0/8 , 192.168.5.0/24 } jump masq
add rule ip t svc ip saddr @aff2 goto ep2
add rule ip t svc numgen random mod 2 == 0 goto ep1
add rule ip t svc goto ep2
add rule ip t ep1 meta l4proto tcp dnat to 10.1.0.1:8080
add rule ip t ep2 update @aff2 { ip saddr }
add rule ip t ep2 meta l4proto tcp dnat to 10.1.0.2:8080
add element ip t dispatch { 10.9.9.9 . tcp . 80 : goto svc }
add element ip t dispatch { 10.9.9.7 . tcp . 80 : goto ep1 }
add element ip t blocked { 6.6.6.6 }
`;

describe('traceNftables on hand-written rules', () => {
  const nodeIPs = ['192.168.0.2'];
  const cases = [
    { name: 'vmap dispatch then numgen fork reaches both endpoints', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.9.9', destPort: 80 }, output: '10.1.0.1:8080, 10.1.0.2:8080', masq: false },
    { name: 'a source outside an anonymous set is marked and masqueraded', pkt: { sourceIP: '172.16.0.1', destIP: '10.9.9.9', destPort: 80 }, output: '10.1.0.1:8080, 10.1.0.2:8080', masq: true },
    { name: 'a vmap miss falls through', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.9.9', destPort: 81 }, output: '', masq: false },
    { name: 'protocol is part of the vmap key', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.9.9', destPort: 80, protocol: 'UDP' as const }, output: '', masq: false },
    { name: 'filter-prerouting runs before DNAT and can reject', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.0.1', destPort: 80 }, output: 'REJECT', masq: false },
    { name: 'named set lookup drops a listed source', pkt: { sourceIP: '6.6.6.6', destIP: '10.9.9.9', destPort: 80 }, output: 'DROP', masq: false },
    { name: 'output hook for a local process', pkt: { sourceIP: '192.168.0.2', destIP: '10.9.9.7', destPort: 80, fromLocalProcess: true }, output: '10.1.0.1:8080', masq: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const r = traceNftables(SCRIPT, tc.pkt, { nodeIPs });
      expect(describeTrace(r)).toBe(tc.output);
      expect(r.masquerade).toBe(tc.masq);
    });
  }
  it('affinity sets: update records, a listed source skips the random choice', () => {
    const pkt = { sourceIP: '10.0.0.5', destIP: '10.9.9.9', destPort: 80 };
    expect(traceNftables(SCRIPT, pkt, { nodeIPs }).affinity).toEqual(['aff2']);
    expect(traceNftables(SCRIPT, pkt, { nodeIPs, affinityHits: ['aff2'] }).endpoints).toEqual(['10.1.0.2:8080']);
  });
  it('the forward hook sees the post-DNAT destination', () => {
    const script = `${SCRIPT}add element ip t dispatch { 10.9.9.6 . tcp . 80 : goto ep9 }\n`.replace('add chain ip t guard', 'add chain ip t guard\nadd chain ip t ep9\nadd rule ip t ep9 meta l4proto tcp dnat to 10.1.0.9:80');
    expect(describeTrace(traceNftables(script, { sourceIP: '10.0.0.5', destIP: '10.9.9.6', destPort: 80 }, { nodeIPs }))).toBe('DROP');
  });
  it('unknown statements throw instead of being ignored', () => {
    const bad = 'add table ip t\nadd chain ip t pre { type nat hook prerouting priority -100 ; }\nadd rule ip t pre iifname "eth0" accept\n';
    expect(() => traceNftables(bad, { sourceIP: '1.1.1.1', destIP: '2.2.2.2', destPort: 1 }, { nodeIPs })).toThrow(/unsupported/);
  });
});

describe('applyNft', () => {
  const base = applyNft(new Map(), SCRIPT);
  const cases = [
    { name: 'refuses deleting a chain that still has rules', script: 'delete chain ip t ep1\n', error: /not empty/ },
    { name: 'refuses deleting a chain a map element points to', script: 'flush chain ip t ep1\ndelete chain ip t ep1\n', error: /in use/ },
    { name: 'refuses deleting a chain a rule jumps to', script: 'flush chain ip t masq\ndelete chain ip t masq\n', error: /in use/ },
    { name: 'refuses deleting a set a rule uses', script: 'delete set ip t aff2\n', error: /in use/ },
    { name: 'refuses a rule naming an unknown chain', script: 'add rule ip t svc goto nowhere\n', error: /unknown chain/ },
    { name: 'refuses a map element pointing to an unknown chain', script: 'add element ip t dispatch { 1.1.1.1 . tcp . 1 : goto nowhere }\n', error: /unknown chain/ },
    { name: 'refuses re-adding a key with another value', script: 'add element ip t dispatch { 10.9.9.9 . tcp . 80 : goto ep1 }\n', error: /another value/ },
    { name: 'refuses deleting a missing element', script: 'delete element ip t dispatch { 1.1.1.1 . tcp . 1 }\n', error: /no such element/ },
    { name: 'refuses a symbolic priority (numeric only, TOOLCHAIN)', script: 'add chain ip t x { type nat hook output priority dstnat ; }\n', error: /numeric/ },
  ];
  for (const tc of cases) it(tc.name, () => expect(() => applyNft(base, tc.script)).toThrow(tc.error));

  it('a failed transaction changes nothing', () => {
    expect(() => applyNft(base, 'flush chain ip t svc\nadd rule ip t svc goto nowhere\n')).toThrow();
    expect(dumpNft(base, 'ip t')).toEqual(dumpNft(applyNft(new Map(), SCRIPT), 'ip t'));
  });
  it('re-adding an identical element or chain is accepted', () => {
    expect(() => applyNft(base, 'add element ip t dispatch { 10.9.9.9 . tcp . 80 : goto svc }\nadd chain ip t svc\n')).not.toThrow();
  });
  it('delete and re-add of a table in one script starts it empty', () => {
    const rs = applyNft(base, 'add table ip t\ndelete table ip t\nadd table ip t\n');
    expect(dumpNft(rs, 'ip t')).toEqual([]);
  });
});
