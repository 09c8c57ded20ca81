// The rendered scripts against the real tools, in a throwaway network namespace: the kernel
// and the userspace parsers are the judges of syntax. Skips (with the reason) when the tools
// are not installed or namespaces cannot be created; this test never installs anything.
// The cases build on each other (vitest runs a file's tests in order): the last two compare
// the namespace that received full+partial scripts with one that received a fresh full one.

import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { deepFreeze } from '@slicemesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DpState } from './model.ts';
import { KUBE_PROXY_CHAINS } from './iptables/chain-names.ts';
import { renderIptables, renderIptablesFull } from './iptables/render.ts';
import { renderNftablesFull, renderNftablesUpdate } from './nftables/render.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from './testing/builders.ts';

function has(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).status === 0;
}

const missing = ['ip', 'iptables-restore', 'ip6tables-restore', 'nft'].filter((t) => !has(t));
const id = randomUUID().slice(0, 8);
const ns = `sm-test-${id}`;
/** A second namespace that only ever sees full scripts, to compare partial updates against. */
const fresh = `sm-test-${id}-b`;
let nsError: string | null = null;

function exec(where: string, cmd: string, args: string[], input = ''): { ok: boolean; out: string } {
  const r = spawnSync('ip', ['netns', 'exec', where, cmd, ...args], { input, encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

function inNs(cmd: string, args: string[], input: string): { ok: boolean; out: string } {
  return exec(ns, cmd, args, input);
}

/** iptables-save nat rules of chains named `prefix…`, grouped per chain, chains sorted (creation order differs). */
function natRules(where: string, prefix = 'SLICEMESH-'): string {
  const lines = exec(where, 'iptables-save', ['-t', 'nat']).out.split('\n').filter((l) => l.startsWith(`-A ${prefix}`));
  const chain = (l: string) => l.split(' ')[1] ?? '';
  return lines.sort((a, b) => (chain(a) < chain(b) ? -1 : chain(a) > chain(b) ? 1 : 0)).join('\n');
}

/** `nft list table` as blocks sorted by name; set/map elements sorted, rule order kept. */
function nftTable(where: string): string {
  const text = exec(where, 'nft', ['list', 'table', 'ip', 'slicemesh']).out;
  const blocks = text.split(/\n\t(?=chain |set |map )/).slice(1);
  return blocks
    .map((b) => (b.startsWith('chain ') ? b : b.split(/[\n,]/).map((x) => x.trim()).sort().join('\n')))
    .sort()
    .join('\n--\n');
}

const v4: DpState = deepFreeze(
  dpState(
    [
      svc('ns1/web:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2'), ep('10.180.0.3')], sessionAffinityTimeoutSeconds: 300 }),
      svc('ns1/lb:http', {
        clusterIP: '172.30.0.42',
        nodePort: 30080,
        externalIPs: ['192.168.99.1'],
        loadBalancerIPs: ['1.2.3.4'],
        loadBalancerSourceRanges: ['203.0.113.0/25'],
        externalPolicyLocal: true,
        healthCheckNodePort: 30000,
        endpoints: [ep('10.180.1.1', { isLocal: true }), ep('10.180.1.2')],
      }),
      svc('ns1/dns:dns', { clusterIP: '172.30.0.10', port: 53, protocol: 'UDP', endpoints: [ep('10.180.2.1', { port: 53 })] }),
      svc('ns1/sctp:s', { clusterIP: '172.30.0.11', port: 9, protocol: 'SCTP', endpoints: [ep('10.180.2.2', { port: 9 })] }),
      svc('ns1/empty:http', { clusterIP: '172.30.0.43', nodePort: 30081 }),
      svc('ns1/itp:http', { clusterIP: '172.30.0.44', internalPolicyLocal: true, endpoints: [ep('10.180.3.1')] }),
    ],
    { nodeIPs: [], primaryNodeIP: '192.168.0.2' },
  ),
);
const v6: DpState = deepFreeze(
  dpState([svc('ns1/web:http', { clusterIP: 'fd00:172::41', nodePort: 30080, endpoints: [ep('fd00:10::1'), ep('fd00:10::2')] })], { family: 'IPv6', podCIDR: 'fd00:10::/64' }),
);
const v4next: DpState = deepFreeze({ ...v4, servicePorts: v4.servicePorts.map((sp) => (sp.servicePortName === 'ns1/web:http' ? { ...sp, clusterEndpoints: [ep('10.180.0.1'), ep('10.180.0.9')] } : sp)) });

describe(`rendered rules on the real tools${missing.length > 0 ? ` (skipped: ${missing.join(', ')} not installed)` : ''}`, () => {
  beforeAll(() => {
    if (missing.length > 0) return;
    try {
      execFileSync('ip', ['netns', 'add', ns], { stdio: 'pipe' });
      execFileSync('ip', ['netns', 'add', fresh], { stdio: 'pipe' });
    } catch (e) {
      nsError = `cannot create a network namespace: ${String(e)}`;
    }
  });
  afterAll(() => {
    if (missing.length > 0) return;
    spawnSync('ip', ['netns', 'delete', ns]);
    spawnSync('ip', ['netns', 'delete', fresh]);
  });

  const cases: { name: string; run: () => { ok: boolean; out: string }[] }[] = [
    { name: 'iptables-restore --noflush accepts the full IPv4 script', run: () => [inNs('iptables-restore', ['--noflush'], renderIptablesFull(v4))] },
    {
      name: 'D.4.15 iptables-restore --noflush accepts the kube-proxy-mode script beside ours, and ours stays as it was',
      run: () => {
        const before = natRules(ns);
        const applied = inNs('iptables-restore', ['--noflush'], renderIptablesFull(v4, KUBE_PROXY_CHAINS));
        expect(natRules(ns)).toBe(before);
        expect(natRules(ns, 'KUBE-')).toContain('-A KUBE-SVC-');
        return [applied];
      },
    },
    {
      name: 'iptables-restore accepts a partial sync on top',
      run: () => {
        const first = renderIptables(v4);
        const partial = renderIptables(v4next, { previous: first, changedServicePorts: new Set(['ns1/web']) });
        return [inNs('iptables-restore', ['--noflush'], partial.script)];
      },
    },
    { name: 'ip6tables-restore --noflush accepts the full IPv6 script', run: () => [inNs('ip6tables-restore', ['--noflush'], renderIptablesFull(v6))] },
    { name: 'nft -f accepts the full IPv4 script, twice', run: () => [inNs('nft', ['-f', '-'], renderNftablesFull(v4)), inNs('nft', ['-f', '-'], renderNftablesFull(v4))] },
    { name: 'nft -f accepts an update transaction', run: () => [inNs('nft', ['-f', '-'], renderNftablesUpdate(v4, v4next).script)] },
    { name: 'nft -f accepts the full IPv6 script', run: () => [inNs('nft', ['-f', '-'], renderNftablesFull(v6))] },
    {
      name: 'D.4.12 the kernel ends up the same after full+partial as after a fresh full (iptables)',
      run: () => {
        const applied = exec(fresh, 'iptables-restore', ['--noflush'], renderIptablesFull(v4next));
        expect(natRules(ns)).toBe(natRules(fresh));
        expect(natRules(ns)).toContain('--to-destination 10.180.0.9:80');
        expect(natRules(fresh, 'KUBE-')).toBe(''); // D.4.15: nothing of kube-proxy's names in our script
        expect(natRules(ns, 'KUBE-')).toContain('--to-destination 10.180.0.2:80'); // the partial sync left kube-proxy's alone
        return [applied];
      },
    },
    {
      name: 'D.6.9 the kernel ends up the same after full+update as after a fresh full (nftables)',
      run: () => {
        const applied = exec(fresh, 'nft', ['-f', '-'], renderNftablesFull(v4next));
        expect(nftTable(ns)).toBe(nftTable(fresh));
        expect(nftTable(ns)).toContain('numgen random mod 2');
        expect(nftTable(ns)).toContain('dnat to 10.180.0.9:80');
        return [applied];
      },
    },
  ];
  for (const tc of cases) {
    it(tc.name, (ctx) => {
      if (missing.length > 0) ctx.skip(`${missing.join(', ')} not installed`);
      if (nsError !== null) ctx.skip(nsError);
      for (const r of tc.run()) expect(r.out).toBe(r.ok ? r.out : '<success>');
    });
  }
});
