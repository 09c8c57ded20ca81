// D.4.15 chain naming: our own prefix by default, kube-proxy's names in kube-proxy mode, and
// in kube-proxy mode the renderer's output is byte for byte what it was before names had a
// prefix (digests taken from the renderer of commit 8c64935, before this change).

import { createHash } from 'node:crypto';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpEndpoint, DpServicePort } from '../model.ts';
import { DEFAULT_MASQUERADE_BIT, OWN_MASQUERADE_BIT } from '../model.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import { KUBE_PROXY_FIXTURES, fixtureText } from '../testing/kube-proxy-fixtures.ts';
import type { IptablesTables } from '../testing/iptables-restore-sim.ts';
import { applyIptablesRestore, dumpIptablesTable, emptyIptables } from '../testing/iptables-restore-sim.ts';
import { traceIptables } from '../testing/trace-iptables.ts';
import {
  IPTABLES_CHAIN_NAME_MAX,
  KUBE_PROXY_CHAINS,
  OWN_CHAINS,
  defaultMasqueradeBit,
  iptablesChainNames,
  iptablesChainsOf,
} from './chain-names.ts';
import type { IptablesChainNames } from './chain-names.ts';
import { renderIptables } from './render.ts';
import { renderIptablesJumps } from './top-level.ts';

const port = (servicePortName: string, protocol: DpServicePort['protocol'] = 'TCP') => deepFreeze({ servicePortName, protocol });
const addr = (ip: string, p = 80): Pick<DpEndpoint, 'ip' | 'port'> => deepFreeze({ ip, port: p });
const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** Every name a naming can produce for one port and one endpoint, plus the fixed ones. */
function everyName(n: IptablesChainNames): string[] {
  const s = n.service(port('ns1/svc1:p80'));
  return [n.services, n.externalServices, n.forward, n.nodePorts, n.proxyFirewall, n.postrouting, n.markMasq, s.svc, s.svl, s.ext, s.fw, n.endpoint(port('ns1/svc1:p80'), addr('10.180.0.1'))];
}

describe('D.4.15 chain names from one prefix', () => {
  const cases = [
    { name: 'kube-proxy mode: the fixed chains are kube-proxy\'s', got: () => [KUBE_PROXY_CHAINS.services, KUBE_PROXY_CHAINS.externalServices, KUBE_PROXY_CHAINS.markMasq], want: ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-MARK-MASQ'] },
    { name: 'kube-proxy mode: SVC keeps 16 hash characters (upstream golden hash)', got: () => KUBE_PROXY_CHAINS.service(port('ns1/svc1:p80')).svc, want: 'KUBE-SVC-XPGD46QRK7WJZT7O' },
    { name: 'kube-proxy mode: SEP (upstream golden hash)', got: () => KUBE_PROXY_CHAINS.endpoint(port('ns1/svc1:p80'), addr('10.180.0.1')), want: 'KUBE-SEP-SXIVWICOYRO3J4NJ' },
    { name: 'own mode: the fixed chains carry our prefix', got: () => [OWN_CHAINS.services, OWN_CHAINS.postrouting, OWN_CHAINS.forward], want: ['SLICEMESH-SERVICES', 'SLICEMESH-POSTROUTING', 'SLICEMESH-FORWARD'] },
    { name: 'own mode: the same hash, cut to 14 characters', got: () => OWN_CHAINS.service(port('ns1/svc1:p80')).svc, want: 'SLICEMESH-SVC-XPGD46QRK7WJZT' },
    { name: 'own mode: FW, SVL and EXT share the service hash', got: () => Object.values(OWN_CHAINS.service(port('ns5/svc5:p80'))), want: ['SLICEMESH-SVC-NUKIZ6OKUXPJNT', 'SLICEMESH-SVL-NUKIZ6OKUXPJNT', 'SLICEMESH-EXT-NUKIZ6OKUXPJNT', 'SLICEMESH-FW-NUKIZ6OKUXPJNT'] },
    { name: 'own mode: SEP', got: () => OWN_CHAINS.endpoint(port('ns1/svc1:p80'), addr('10.180.0.1')), want: 'SLICEMESH-SEP-SXIVWICOYRO3J4' },
    { name: 'the modes map to the two namings', got: () => [iptablesChainsOf('own').prefix, iptablesChainsOf('kube-proxy').prefix], want: ['SLICEMESH', 'KUBE'] },
    { name: 'the mark: 0x2000 (bit 13) for own, kube-proxy\'s 0x4000 (bit 14) for kube-proxy', got: () => [defaultMasqueradeBit('own'), defaultMasqueradeBit('kube-proxy')], want: [OWN_MASQUERADE_BIT, DEFAULT_MASQUERADE_BIT] },
  ];
  for (const tc of cases) it(tc.name, () => expect(tc.got()).toEqual(tc.want));

  it(`every name fits iptables' ${IPTABLES_CHAIN_NAME_MAX} characters; our longest are exactly 28`, () => {
    for (const n of [OWN_CHAINS, KUBE_PROXY_CHAINS, iptablesChainNames('SM'), iptablesChainNames('ABCDEFGHIJ')]) {
      for (const name of everyName(n)) expect(name.length, name).toBeLessThanOrEqual(IPTABLES_CHAIN_NAME_MAX);
    }
    const longest = everyName(OWN_CHAINS).filter((n) => n.length === IPTABLES_CHAIN_NAME_MAX);
    expect(longest).toEqual(['SLICEMESH-SVC-XPGD46QRK7WJZT', 'SLICEMESH-SVL-XPGD46QRK7WJZT', 'SLICEMESH-EXT-XPGD46QRK7WJZT', 'SLICEMESH-SEP-SXIVWICOYRO3J4']);
    expect(OWN_CHAINS.externalServices).toBe('SLICEMESH-EXTERNAL-SERVICES'); // 27, the longest fixed name
  });

  it('the simulated kernel, like iptables, refuses a 29-character chain and takes our 28-character ones', () => {
    expect(() => applyIptablesRestore(emptyIptables(), `*nat\n:${'X'.repeat(29)} - [0:0]\nCOMMIT\n`)).toThrow(/too long/);
    const state = deepFreeze(dpState([svc('ns1/svc1:p80', { nodePort: 30080, loadBalancerIPs: ['1.2.3.4'], loadBalancerSourceRanges: ['203.0.113.0/24'], externalPolicyLocal: true, endpoints: [ep('10.180.0.1', { isLocal: true })] })]));
    expect(() => applyIptablesRestore(emptyIptables(), renderIptables(state, { includeJumps: true }).script)).not.toThrow();
  });

  const refused = [
    { name: 'a prefix with a dash (the dash is ours to add)', prefix: 'SLICE-MESH' },
    { name: 'lower case', prefix: 'slicemesh' },
    { name: 'empty', prefix: '' },
    { name: 'too long for EXTERNAL-SERVICES', prefix: 'ABCDEFGHIJK' },
  ];
  for (const tc of refused) it(`refuses ${tc.name}`, () => expect(() => iptablesChainNames(tc.prefix)).toThrow(/iptables chain prefix/));

  it('each naming knows only its own per-service chains as its own', () => {
    const own = OWN_CHAINS.service(port('ns1/svc1:p80')).svc;
    const theirs = KUBE_PROXY_CHAINS.service(port('ns1/svc1:p80')).svc;
    expect([OWN_CHAINS.isServiceChain(own), OWN_CHAINS.isServiceChain(theirs), OWN_CHAINS.isServiceChain('SLICEMESH-SERVICES')]).toEqual([true, false, false]);
    expect([KUBE_PROXY_CHAINS.isServiceChain(theirs), KUBE_PROXY_CHAINS.isServiceChain(own), KUBE_PROXY_CHAINS.isServiceChain('KUBE-SERVICES')]).toEqual([true, false, false]);
  });

  it('the jumps from the built-in chains lead to the naming\'s chains', () => {
    expect(new Set(renderIptablesJumps().map((j) => j.target))).toEqual(new Set(['SLICEMESH-EXTERNAL-SERVICES', 'SLICEMESH-NODEPORTS', 'SLICEMESH-PROXY-FIREWALL', 'SLICEMESH-FORWARD', 'SLICEMESH-SERVICES', 'SLICEMESH-POSTROUTING']));
    expect(renderIptablesJumps(KUBE_PROXY_CHAINS).every((j) => j.target.startsWith('KUBE-') && j.args.endsWith(`-j ${j.target}`))).toBe(true);
  });
});

describe('D.4.15 beside kube-proxy in one (simulated) kernel', () => {
  // kube-proxy's ruleset (its names, its mark 0x4000) serves one ClusterIP, ours (own names,
  // mark 0x2000) another; the kernel test in services/proxy-agent does the same for real.
  const theirState = deepFreeze(dpState([svc('ns1/theirs:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1')] })], { masqueradeBit: DEFAULT_MASQUERADE_BIT }));
  const ourState = deepFreeze(dpState([svc('ns1/ours:http', { clusterIP: '172.30.0.42', endpoints: [ep('10.180.0.2')] })], { masqueradeBit: OWN_MASQUERADE_BIT }));
  const theirs = renderIptables(theirState, { chains: KUBE_PROXY_CHAINS, includeJumps: true });
  const ours = renderIptables(ourState, { includeJumps: true });
  const both = applyIptablesRestore(applyIptablesRestore(emptyIptables(), theirs.script), ours.script);
  const onNode = (t: IptablesTables) => ({ filter: [], nat: [...(t.get('nat')?.keys() ?? [])] });
  const chainsOf = (t: IptablesTables, prefix: string) => [...dumpIptablesTable(t, 'filter'), ...dumpIptablesTable(t, 'nat')].filter((l) => l.startsWith(`:${prefix}`) || l.startsWith(`-A ${prefix}`));

  it('a full resync of ours, seeing kube-proxy\'s chains on the node, declares, flushes and deletes none of them', () => {
    const r = renderIptables(ourState, { previous: { chains: onNode(both) } });
    expect(r.deletedChains).toEqual([]);
    expect(r.script).not.toContain('KUBE-');
    expect(chainsOf(applyIptablesRestore(both, r.script), 'KUBE-')).toEqual(chainsOf(both, 'KUBE-'));
  });
  it('a full resync in kube-proxy mode leaves our chains exactly as they were', () => {
    const r = renderIptables(theirState, { chains: KUBE_PROXY_CHAINS, previous: { chains: onNode(both) } });
    expect(r.deletedChains).toEqual([]);
    expect(r.script).not.toContain('SLICEMESH-');
    expect(chainsOf(applyIptablesRestore(both, r.script), 'SLICEMESH-')).toEqual(chainsOf(both, 'SLICEMESH-'));
  });
  const packets = [
    { name: 'an outside client reaches our ClusterIP through our rules, masqueraded by our mark', dest: '172.30.0.42', want: ['10.180.0.2:80'] },
    { name: 'and kube-proxy\'s ClusterIP through its rules, masqueraded by its mark', dest: '172.30.0.41', want: ['10.180.0.1:80'] },
  ];
  for (const tc of packets) {
    it(tc.name, () => {
      const r = traceIptables(both, { sourceIP: '192.168.7.7', destIP: tc.dest, destPort: 80 }, { nodeIPs: ['192.168.0.2'] });
      expect([r.endpoints, r.masquerade]).toEqual([tc.want, true]);
    });
  }
  it('a packet marked by one proxy is not masqueraded by the other\'s POSTROUTING', () => {
    // Only our rules here, with kube-proxy's mark bit: our POSTROUTING ignores 0x4000.
    const foreignMark = applyIptablesRestore(emptyIptables(), '*nat\n:TEST-MARK - [0:0]\n-A TEST-MARK -j MARK --or-mark 0x4000\n-I PREROUTING 1 -j TEST-MARK\nCOMMIT\n');
    const t = applyIptablesRestore(foreignMark, renderIptables(deepFreeze(dpState([], { masqueradeBit: OWN_MASQUERADE_BIT })), { includeJumps: true }).script);
    expect(traceIptables(t, { sourceIP: '192.168.7.7', destIP: '192.168.0.2', destPort: 22 }, { nodeIPs: ['192.168.0.2'] }).masquerade).toBe(false);
  });
});

describe('D.4.15 kube-proxy mode renders exactly what the renderer rendered before the prefix', () => {
  // sha256 (first 32 hex digits) of `fixtureText` for each fixture, from commit 8c64935.
  const before: Readonly<Record<string, string>> = {
    'golden cluster, full script with jumps': 'e9006c48be9b8e38e475e54397ca5425',
    'golden cluster, sync script': 'c9fc080231ed8858bd6aa2a6d3daef8c',
    'an empty node': '36be7f3a55c21879ee60b4e9aa3e482e',
    'every entry point, full script with jumps': '57f50d01d50e6667ef36b8b5970647e8',
    'every entry point, node IPs and masquerade-all': '0d0142b361e01f7bd573790e493adc28',
    'every entry point, another mark bit': 'db83d1e45ed2138b701c6d753bc695a3',
    'partial: an endpoint change': '73229baba11dd2a038686a5219f50b3e',
    'partial: a deleted service': 'db1be918d5a2b4f49b700355067c8676',
    'partial: losing every endpoint': 'f86d330eaa1f647436f544b624e59eba',
    'partial: nothing changed': '7e288a00c43b8a088107539df9a97efd',
    'full sync deleting stale chains found on the node': '319d51916a428204a58a9620c5d07eed',
    'IPv6, full script with jumps': '45101125cb1d17a259c5a7e4cd074b4e',
    'large cluster': '3d9b19032a9f23b2a95b3c15e387e23c',
  };
  it('covers every fixture', () => expect(KUBE_PROXY_FIXTURES.map((f) => f.name)).toEqual(Object.keys(before)));
  for (const f of KUBE_PROXY_FIXTURES) {
    it(f.name, () => {
      const chains = KUBE_PROXY_CHAINS;
      const previous = f.after === undefined ? f.opts?.previous : renderIptables(deepFreeze(f.after), { chains });
      const r = renderIptables(deepFreeze(f.state), { ...f.opts, chains, ...(previous === undefined ? {} : { previous }) });
      expect(sha(fixtureText(r))).toBe(before[f.name]);
    });
  }
  it('and own mode differs from it only in names: swapping the prefixes back gives the same text when the hash is not involved', () => {
    const f = KUBE_PROXY_FIXTURES.find((x) => x.name === 'an empty node');
    if (!f) throw new Error('fixture missing');
    const own = fixtureText(renderIptables(deepFreeze(f.state), f.opts)).replaceAll('SLICEMESH-', 'KUBE-');
    expect(sha(own)).toBe(before[f.name]);
  });
});
