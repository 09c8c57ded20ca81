// The iptables tracer and restore simulator on hand-written rules, so renderer tests rest on
// a tracer that is itself checked.

import { describe, expect, it } from 'vitest';
import { applyIptablesRestore, emptyIptables } from './iptables-restore-sim.ts';
import { describeTrace } from './trace-result.ts';
import { traceIptables } from './trace-iptables.ts';

const SCRIPT = `*filter
:BLOCK - [0:0]
-A FORWARD -m conntrack --ctstate NEW -j BLOCK
-A INPUT -m conntrack --ctstate NEW -j BLOCK
-A OUTPUT -j BLOCK
-A BLOCK -m comment --comment "reject one" -m tcp -p tcp -d 10.9.0.1 --dport 80 -j REJECT
-A BLOCK -m tcp -p tcp -d 10.9.0.2 --dport 80 -j DROP
-A BLOCK -m udp -p udp --dport 9 -m addrtype --dst-type LOCAL -j ACCEPT
COMMIT
*nat
:SVC - [0:0]
:EP1 - [0:0]
:EP2 - [0:0]
:MASQ - [0:0]
:POST - [0:0]
-A PREROUTING -j SVC
-A OUTPUT -j SVC
-A POSTROUTING -j POST
-A SVC -d 10.9.9.9 -p tcp --dport 80 ! -s 10.0.0.0/8 -j MASQ
-A SVC -d 10.9.9.9 -p tcp --dport 80 -m statistic --mode random --probability 0.5 -j EP1
-A SVC -d 10.9.9.9 -p tcp --dport 80 -j EP2
-A SVC -d 10.9.9.8 -p tcp --dport 80 -m recent --name EP2 --rcheck --seconds 60 --reap -j EP2
-A SVC -d 10.9.9.8 -p tcp --dport 80 -j EP1
-A EP1 -m recent --name EP1 --set -p tcp -j DNAT --to-destination 10.1.0.1:8080
-A EP2 -s 10.1.0.2 -j MASQ
-A EP2 -p tcp -j DNAT --to-destination 10.1.0.2:8080
-A MASQ -j MARK --or-mark 0x4000
-A POST -m mark ! --mark 0x4000/0x4000 -j RETURN
-A POST -j MARK --xor-mark 0x4000
-A POST -j MASQUERADE
COMMIT
`;

describe('traceIptables on hand-written rules', () => {
  const nodeIPs = ['192.168.0.2'];
  const cases = [
    { name: 'a random match forks: both endpoints are reachable', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.9.9', destPort: 80 }, output: '10.1.0.1:8080, 10.1.0.2:8080', masq: false },
    { name: 'a negated source match marks for masquerade', pkt: { sourceIP: '172.16.0.1', destIP: '10.9.9.9', destPort: 80 }, output: '10.1.0.1:8080, 10.1.0.2:8080', masq: true },
    { name: 'hairpin only on the path that reaches itself', pkt: { sourceIP: '10.1.0.2', destIP: '10.9.9.9', destPort: 80 }, output: '10.1.0.1:8080, 10.1.0.2:8080', masq: true },
    { name: 'protocol must match', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.9.9', destPort: 80, protocol: 'UDP' as const }, output: '', masq: false },
    { name: 'REJECT in filter', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.0.1', destPort: 80 }, output: 'REJECT', masq: false },
    { name: 'DROP in filter', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.0.2', destPort: 80 }, output: 'DROP', masq: false },
    { name: 'local process goes through nat OUTPUT and filter OUTPUT', pkt: { sourceIP: '192.168.0.2', destIP: '10.9.0.1', destPort: 80, fromLocalProcess: true }, output: 'REJECT', masq: false },
    { name: 'recent --rcheck misses for a new client', pkt: { sourceIP: '10.0.0.5', destIP: '10.9.9.8', destPort: 80 }, output: '10.1.0.1:8080', masq: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const r = traceIptables(SCRIPT, tc.pkt, { nodeIPs });
      expect(describeTrace(r)).toBe(tc.output);
      expect(r.masquerade).toBe(tc.masq);
    });
  }
  it('per-path masquerade is exact', () => {
    const r = traceIptables(SCRIPT, { sourceIP: '10.1.0.2', destIP: '10.9.9.9', destPort: 80 }, { nodeIPs });
    expect(r.paths.map((p) => [p.endpoint, p.masquerade])).toEqual([
      ['10.1.0.2:8080', true],
      ['10.1.0.1:8080', false],
    ]);
  });
  it('recent --rcheck hits when the source is listed, and --set records it', () => {
    const hit = traceIptables(SCRIPT, { sourceIP: '10.0.0.5', destIP: '10.9.9.8', destPort: 80 }, { nodeIPs, affinityHits: ['EP2'] });
    expect(hit.endpoints).toEqual(['10.1.0.2:8080']);
    const miss = traceIptables(SCRIPT, { sourceIP: '10.0.0.5', destIP: '10.9.9.8', destPort: 80 }, { nodeIPs });
    expect(miss.affinity).toEqual(['EP1']);
  });
  it('ACCEPT is reported when nothing DNATs', () => {
    const r = traceIptables(SCRIPT, { sourceIP: '10.0.0.5', destIP: '192.168.0.2', destPort: 9, protocol: 'UDP' }, { nodeIPs });
    expect(r.verdict).toBe('ACCEPT');
  });
  it('unknown match options throw instead of being ignored', () => {
    const bad = '*nat\n-A PREROUTING -m physdev --physdev-in eth0 -j ACCEPT\nCOMMIT\n';
    expect(() => traceIptables(bad, { sourceIP: '1.1.1.1', destIP: '2.2.2.2', destPort: 1 }, { nodeIPs })).toThrow(/unsupported match/);
  });
});

describe('applyIptablesRestore', () => {
  const cases = [
    { name: 'rejects a jump to an undeclared chain', script: '*nat\n-A PREROUTING -j NOPE\nCOMMIT\n', error: /unknown target NOPE/ },
    { name: 'rejects appending to an unknown chain', script: '*nat\n-A NOPE -j ACCEPT\nCOMMIT\n', error: /no chain NOPE/ },
    { name: 'rejects deleting a built-in chain', script: '*nat\n-X PREROUTING\nCOMMIT\n', error: /built-in/ },
    { name: 'rejects a missing COMMIT', script: '*nat\n:A - [0:0]\n', error: /missing COMMIT/ },
    { name: 'rejects an insert position past the end', script: '*nat\n-I PREROUTING 3 -j ACCEPT\nCOMMIT\n', error: /too big/ },
  ];
  for (const tc of cases) it(tc.name, () => expect(() => applyIptablesRestore(emptyIptables(), tc.script)).toThrow(tc.error));

  it('a declaration flushes a user chain but never a built-in one', () => {
    const t1 = applyIptablesRestore(emptyIptables(), '*nat\n:A - [0:0]\n-A A -j RETURN\n-A PREROUTING -j A\nCOMMIT\n');
    const t2 = applyIptablesRestore(t1, '*nat\n:A - [0:0]\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n');
    expect(t2.get('nat')?.get('A')).toEqual([]);
    expect(t2.get('nat')?.get('PREROUTING')).toHaveLength(1);
  });
  it('leaves the input untouched when a script fails', () => {
    const t1 = applyIptablesRestore(emptyIptables(), '*nat\n:A - [0:0]\nCOMMIT\n');
    expect(() => applyIptablesRestore(t1, '*nat\n-A A -j RETURN\n-A A -j NOPE\nCOMMIT\n')).toThrow();
    expect(t1.get('nat')?.get('A')).toEqual([]);
  });
});
