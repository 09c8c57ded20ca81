// IPVS mode's companion ipsets and iptables rules on the real kernel, in a throwaway network
// namespace: `ipset restore` and `iptables-restore --noflush` accept them (both namings, twice),
// and real TCP connections show the no-endpoint REJECT and the loadBalancerSourceRanges DROP.
// IPVS itself is not needed for these rules (this kernel has none; the IPVS path is covered by
// the fakes and by libs/netfilter's kernel test, which skips where `ipvsadm -L -n` fails).
// Skips with the reason when ipset, iptables or namespaces are missing; installs nothing.

import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { deepFreeze } from '@slicemesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DpState } from '../model.ts';
import { KUBE_PROXY_CHAINS } from '../iptables/chain-names.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import { renderIpvsCompanion } from './companion.ts';

function has(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).status === 0;
}

const missing = ['ip', 'ipset', 'iptables-restore'].filter((t) => !has(t));
const ns = `sm-ipset-${randomUUID().slice(0, 8)}`;
let nsError: string | null = null;

function inNs(cmd: string, args: string[], input = ''): { ok: boolean; out: string } {
  const r = spawnSync('ip', ['netns', 'exec', ns, cmd, ...args], { input, encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

/**
 * Inside the namespace: listen on every `listen` address (on `port`), then connect to `to:port`
 * from `from`, and report `connected`, `refused` or `timeout`.
 */
function connect(listen: readonly string[], from: string, to: string, port = 80): string {
  const script = `
const net = require('node:net');
const addrs = ${JSON.stringify(listen)};
let up = 0;
const servers = addrs.map((a) => net.createServer((s) => s.end()).listen(${port}, a, () => { if (++up === addrs.length) go(); }));
function done(r) { console.log(r); servers.forEach((s) => s.close()); process.exit(0); }
function go() {
  const c = net.connect({ host: ${JSON.stringify(to)}, port: ${port}, localAddress: ${JSON.stringify(from)} });
  c.setTimeout(700, () => done('timeout'));
  c.on('connect', () => done('connected'));
  c.on('error', (e) => done(e.code === 'ECONNREFUSED' ? 'refused' : e.code));
}`;
  return inNs(process.execPath, ['-e', script]).out.trim();
}

const state: DpState = deepFreeze(
  dpState(
    [
      svc('ns1/web:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1')] }),
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
      svc('ns1/empty:http', { clusterIP: '172.30.0.43', nodePort: 30081 }),
      svc('ns1/dns:dns', { clusterIP: '172.30.0.10', port: 53, protocol: 'UDP', nodePort: 30053, endpoints: [ep('10.180.2.1', { port: 53 })] }),
      svc('ns1/sctp:s', { clusterIP: '172.30.0.11', port: 9, protocol: 'SCTP', nodePort: 30009, endpoints: [ep('10.180.2.2', { port: 9 })] }),
    ],
    { nodeIPs: ['192.168.0.2'], primaryNodeIP: '192.168.0.2', podCIDR: '10.180.0.0/16' },
  ),
);
const v6: DpState = deepFreeze(
  dpState([svc('ns1/web:http', { clusterIP: 'fd00:172::41', nodePort: 30080, loadBalancerIPs: ['fd00:99::1'], loadBalancerSourceRanges: ['fd00:1::/64'], endpoints: [ep('fd00:10::1')] })], {
    family: 'IPv6',
    podCIDR: 'fd00:10::/64',
  }),
);

describe(`D.5.4 IPVS companion rules on the real kernel${missing.length > 0 ? ` (skipped: ${missing.join(', ')} not installed)` : ''}`, () => {
  beforeAll(() => {
    if (missing.length > 0) return;
    try {
      execFileSync('ip', ['netns', 'add', ns], { stdio: 'pipe' });
      execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up'], { stdio: 'pipe' });
    } catch (e) {
      nsError = `cannot create a network namespace: ${String(e)}`;
    }
  });
  afterAll(() => {
    if (missing.length > 0) return;
    spawnSync('ip', ['netns', 'delete', ns]);
  });

  it.skipIf(missing.length > 0)('ipset restore and iptables-restore accept our names and kube-proxy\'s, IPv4 and IPv6, twice', (ctx) => {
    if (nsError !== null) ctx.skip(nsError);
    for (const r of [renderIpvsCompanion(state), renderIpvsCompanion(state, KUBE_PROXY_CHAINS), renderIpvsCompanion(state)]) {
      expect(inNs('ipset', ['restore', '-exist'], r.ipsetRestore)).toMatchObject({ ok: true });
      expect(inNs('iptables-restore', ['--noflush'], r.iptablesRestore)).toMatchObject({ ok: true });
    }
    const six = renderIpvsCompanion(v6);
    expect(inNs('ipset', ['restore', '-exist'], six.ipsetRestore)).toMatchObject({ ok: true });
    expect(inNs('ip6tables-restore', ['--noflush'], six.iptablesRestore)).toMatchObject({ ok: true });
    const names = inNs('ipset', ['list', '-n']).out.split('\n');
    expect(names).toEqual(expect.arrayContaining(['KUBE-CLUSTER-IP', 'KUBE-LOAD-BALANCER-SOURCE-CIDR', 'SLICEMESH-CLUSTER-IP', 'SLICEMESH-LB-SOURCE-CIDR', 'SLICEMESH-6-CLUSTER-IP']));
    expect(inNs('ipset', ['list', 'SLICEMESH-NO-ENDPOINTS']).out).toContain('172.30.0.43,tcp:80');
  });

  it.skipIf(missing.length > 0)('packets: a service without endpoints is rejected, an LB IP drops sources outside its ranges, a service address answers only on service ports', (ctx) => {
    if (nsError !== null) ctx.skip(nsError);
    // The service addresses live on lo here (IPVS would own them on its dummy interface); a
    // listener on each shows what gets through the filter table.
    for (const a of ['172.30.0.41', '172.30.0.43', '1.2.3.4', '203.0.113.5', '198.51.100.7']) {
      expect(inNs('ip', ['addr', 'add', `${a}/32`, 'dev', 'lo'])).toMatchObject({ ok: true });
    }
    const listen = ['172.30.0.41', '172.30.0.43', '1.2.3.4'];
    // The first test left our rules in place; the kube-proxy-named copy is there too, and
    // uses the same sets' contents, so flush it to judge ours alone.
    expect(inNs('iptables', ['-F', 'INPUT'])).toMatchObject({ ok: true });
    expect(inNs('iptables', ['-F', 'OUTPUT'])).toMatchObject({ ok: true });
    expect([connect(listen, '198.51.100.7', '172.30.0.43'), connect(listen, '198.51.100.7', '1.2.3.4'), connect(listen, '198.51.100.7', '172.30.0.41', 22)]).toEqual(['connected', 'connected', 'connected']);
    expect(inNs('iptables-restore', ['--noflush'], renderIpvsCompanion(state).iptablesRestore)).toMatchObject({ ok: true });
    expect({
      withEndpoints: connect(listen, '198.51.100.7', '172.30.0.41'),
      withoutEndpoints: connect(listen, '198.51.100.7', '172.30.0.43'),
      lbFromOutsideRanges: connect(listen, '198.51.100.7', '1.2.3.4'),
      lbFromInsideRanges: connect(listen, '203.0.113.5', '1.2.3.4'),
      serviceAddressOtherPort: connect(listen, '198.51.100.7', '172.30.0.41', 22),
    }).toEqual({ withEndpoints: 'connected', withoutEndpoints: 'refused', lbFromOutsideRanges: 'timeout', lbFromInsideRanges: 'connected', serviceAddressOtherPort: 'refused' });
  });
});
