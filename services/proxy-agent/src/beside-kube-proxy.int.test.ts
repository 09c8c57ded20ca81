// D.4.15 on the real kernel: the agent's iptables backend beside kube-proxy on one node.
// kube-proxy is played by our iptables backend with kube-proxy's chain names and mark 0x4000
// (and no knowledge of our chains), plus the canary and drop-mark chains kube-proxy and the
// kubelet keep; the agent runs with its defaults (SLICEMESH- names, mark 0x2000). Both load
// into the same namespace's tables; each one's full resync (a fresh backend: list the chains, delete stale ones, restore
// with --noflush) must leave the other's chains exactly as they were; real TCP reaches the
// ClusterIP each of them serves, and each masquerades with its own mark only. At the end
// kube-proxy stops and the agent takes its place in kube-proxy mode, removing what it left
// under its own names. Skips with the reason when namespaces cannot be made.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { DpServicePort, DpState } from '@slicemesh/dataplane';
import { IPTABLES_CHAIN_NAME_MAX, KUBE_PROXY_CHAINS, masqueradeMark } from '@slicemesh/dataplane';
import { dpEndpoint, dpServicePort } from '@slicemesh/dataplane/testing';
import { IptablesRestorer, netnsExec, spawnExec } from '@slicemesh/netfilter';
import { realClock } from '@slicemesh/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from './backend.ts';
import { createBackend } from './backends/create-backend.ts';
import { IptablesBackend } from './backends/iptables-backend.ts';
import type { ProxyAgentConfig } from './config.ts';
import { parseProxyAgentConfig } from './config.ts';
import type { LabPod } from './test-lab.ts';
import { NetnsLab, POD_PORT, POD_RANGE, SERVICE_RANGE, labUnavailableReason } from './test-lab.ts';

const unavailable = labUnavailableReason();
const prefix = `smkp${randomUUID().slice(0, 6)}`;
/** Served by kube-proxy's rules only, by ours only, and by kube-proxy's until its resync drops it. */
const THEIR_IP = '10.96.0.10';
const OUR_IP = '10.96.0.20';
const THEIR_GONE_IP = '10.96.0.11';
const OUR_GONE_IP = '10.96.0.21';

/** Chains kube-proxy and the kubelet create that our renderer never writes. */
const KUBE_EXTRAS = [
  '*mangle',
  ':KUBE-PROXY-CANARY - [0:0]',
  ':KUBE-KUBELET-CANARY - [0:0]',
  'COMMIT',
  '*filter',
  ':KUBE-PROXY-CANARY - [0:0]',
  ':KUBE-FIREWALL - [0:0]',
  '-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP',
  'COMMIT',
  '*nat',
  ':KUBE-PROXY-CANARY - [0:0]',
  ':KUBE-MARK-DROP - [0:0]',
  '-A KUBE-MARK-DROP -j MARK --or-mark 0x8000',
  'COMMIT',
  '',
].join('\n');

function run(ns: string, cmd: string, args: readonly string[], input?: string): string {
  const r = spawnSync('ip', ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${ns}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** `iptables-save` lines (declarations and rules, no counters) of chains starting with `chainPrefix`, every table. */
function saved(ns: string, chainPrefix: string): string[] {
  const out: string[] = [];
  for (const table of ['filter', 'nat', 'mangle']) {
    for (const line of run(ns, 'iptables-save', ['-t', table]).split('\n')) {
      if (line.startsWith(`:${chainPrefix}`)) out.push(`${table} ${line.split(' ')[0]}`);
      else if (line.startsWith(`-A ${chainPrefix}`)) out.push(`${table} ${line}`);
    }
  }
  return out.sort();
}

/** Packets counted by the MASQUERADE rule of `chain` (iptables -L -v -x). */
function masqueraded(ns: string, chain: string): number {
  const lines = run(ns, 'iptables', ['-w', '-t', 'nat', '-L', chain, '-v', '-n', '-x']).split('\n');
  const rule = lines.find((l) => /\bMASQUERADE\b/.test(l));
  if (rule === undefined) throw new Error(`no MASQUERADE rule in ${chain}`);
  return Number(rule.trim().split(/\s+/)[0]);
}

function port(name: string, clusterIP: string, pods: readonly LabPod[]): DpServicePort {
  return dpServicePort(name, { clusterIP, port: 80, endpoints: pods.map((p) => dpEndpoint(p.ip, { port: POD_PORT, isLocal: true })) });
}

function stateOf(config: ProxyAgentConfig, ports: readonly DpServicePort[]): DpState {
  return { family: 'IPv4', nodeIPs: [], primaryNodeIP: null, podCIDR: POD_RANGE, masqueradeAll: false, masqueradeBit: config.masqueradeBit, servicePorts: ports };
}

describe(`beside kube-proxy on the real kernel (D.4.15)${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let lab: NetnsLab | undefined;
  let node = '';
  const theirConfig = parseProxyAgentConfig([], { NODE_NAME: 'node-a1', IPTABLES_CHAINS: 'kube-proxy' });
  const ourConfig = parseProxyAgentConfig([], { NODE_NAME: 'node-a1' });
  /** A backend as a freshly started agent has it: its first sync is full and lists the node's chains. */
  const fresh = (config: ProxyAgentConfig): Promise<Backend> => createBackend(config, { exec: netnsExec(spawnExec(), node), clock: realClock, writeFile: async () => {} });
  /**
   * kube-proxy, freshly started: kube-proxy's names and mark, and like kube-proxy it knows
   * nothing of our chains (the agent in kube-proxy mode would also remove our leftovers).
   */
  const kubeProxy = (): Backend =>
    new IptablesBackend({ restorer: new IptablesRestorer({ exec: netnsExec(spawnExec(), node) }), clock: realClock, jumpCheckIntervalMs: 30_000, chains: KUBE_PROXY_CHAINS });
  const need = (): NetnsLab => {
    if (!lab) throw new Error('setup failed');
    return lab;
  };
  const reply = async (from: string, ip: string): Promise<string[]> => Object.keys(await need().connect(from, ip, 80, 3)).sort();

  beforeAll(async () => {
    if (unavailable) return;
    lab = new NetnsLab(prefix, [{ name: 'node-a1', zone: 'zone-a', pods: 2 }]);
    await lab.startServers();
    node = lab.node('node-a1').ns;
    // The outside client reaches ClusterIPs through the node, as through a gateway.
    run(lab.client, 'ip', ['route', 'add', SERVICE_RANGE, 'via', lab.node('node-a1').ip]);
  });
  afterAll(() => lab?.destroy());

  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      await fn();
    });

  step('the settings: kube-proxy mode keeps its names and mark 0x4000, the default is ours with 0x2000', async () => {
    expect([theirConfig.iptablesChains, masqueradeMark(theirConfig.masqueradeBit)]).toEqual(['kube-proxy', '0x4000']);
    expect([ourConfig.iptablesChains, masqueradeMark(ourConfig.masqueradeBit)]).toEqual(['own', '0x2000']);
  });

  step('kube-proxy (played by kube-proxy mode) programs the node first', async () => {
    const [pod1, pod2] = [need().pod('node-a1-pod1'), need().pod('node-a1-pod2')];
    run(node, 'iptables-restore', ['--noflush', '-w'], KUBE_EXTRAS);
    const r = await kubeProxy().sync({ state: stateOf(theirConfig, [port('kube-system/theirs:http', THEIR_IP, [pod1]), port('kube-system/theirs-gone:http', THEIR_GONE_IP, [pod2])]), changedServices: null });
    expect(r.mode).toBe('full');
    expect(saved(node, 'SLICEMESH-')).toEqual([]);
    expect(saved(node, 'KUBE-SVC-').filter((l) => l.startsWith('nat :'))).toHaveLength(2);
  });

  let theirs: string[] = [];
  step('our full sync loads beside it and leaves every KUBE- chain exactly as it was', async () => {
    const [pod1, pod2] = [need().pod('node-a1-pod1'), need().pod('node-a1-pod2')];
    theirs = saved(node, 'KUBE-');
    const r = await (await fresh(ourConfig)).sync({ state: stateOf(ourConfig, [port('default/ours:http', OUR_IP, [pod2]), port('default/ours-gone:http', OUR_GONE_IP, [pod1])]), changedServices: null });
    expect(r).toMatchObject({ mode: 'full', detail: { deletedChains: 0 } });
    expect(saved(node, 'KUBE-')).toEqual(theirs);
    const ours = saved(node, 'SLICEMESH-');
    expect(ours.filter((l) => l.startsWith('nat :SLICEMESH-SVC-'))).toHaveLength(2);
    // The longest names (SLICEMESH-SVC-<14>, SLICEMESH-SEP-<14>) are at iptables' limit and the kernel took them.
    expect(ours.filter((l) => / :\S+$/.test(l)).map((l) => l.split(':')[1]?.length ?? 0).some((n) => n === IPTABLES_CHAIN_NAME_MAX)).toBe(true);
    // Both proxies' jumps sit in the built-in chains, ours inserted last and so first.
    const prerouting = run(node, 'iptables', ['-w', '-t', 'nat', '-S', 'PREROUTING']);
    expect(prerouting.indexOf('-j SLICEMESH-SERVICES')).toBeGreaterThan(0);
    expect(prerouting.indexOf('-j KUBE-SERVICES')).toBeGreaterThan(prerouting.indexOf('-j SLICEMESH-SERVICES'));
  });

  step('real TCP: our ClusterIP is served by our rules, kube-proxy\'s by its rules, from a pod, the node and outside', async () => {
    const [pod1, pod2] = [need().pod('node-a1-pod1'), need().pod('node-a1-pod2')];
    for (const from of [pod1.ns, node, need().client]) {
      expect(await reply(from, OUR_IP), `ours from ${from}`).toEqual(['node-a1-pod2']);
      expect(await reply(from, THEIR_IP), `theirs from ${from}`).toEqual(['node-a1-pod1']);
    }
    expect(await reply(pod2.ns, OUR_GONE_IP)).toEqual(['node-a1-pod1']);
  });

  step('each proxy masquerades with its own mark only: an outside client to our ClusterIP counts in SLICEMESH-POSTROUTING, not KUBE-POSTROUTING', async () => {
    run(node, 'iptables', ['-w', '-t', 'nat', '-Z']);
    expect(await reply(need().client, OUR_IP)).toEqual(['node-a1-pod2']);
    expect([masqueraded(node, 'SLICEMESH-POSTROUTING'), masqueraded(node, 'KUBE-POSTROUTING')]).toEqual([3, 0]);
    expect(await reply(need().client, THEIR_IP)).toEqual(['node-a1-pod1']);
    expect([masqueraded(node, 'SLICEMESH-POSTROUTING'), masqueraded(node, 'KUBE-POSTROUTING')]).toEqual([3, 3]);
  });

  step('kube-proxy\'s full resync (a restart that drops a Service) deletes its own stale chains and leaves ours exactly as they were', async () => {
    const pod1 = need().pod('node-a1-pod1');
    const ours = saved(node, 'SLICEMESH-');
    const r = await kubeProxy().sync({ state: stateOf(theirConfig, [port('kube-system/theirs:http', THEIR_IP, [pod1])]), changedServices: null });
    expect(r).toMatchObject({ mode: 'full', detail: { deletedChains: 2 } }); // KUBE-SVC- and KUBE-SEP- of theirs-gone
    expect(saved(node, 'SLICEMESH-')).toEqual(ours);
    expect(saved(node, 'KUBE-PROXY-CANARY')).toHaveLength(3);
  });

  step('our full resync (a restart that drops a Service) deletes our own stale chains and leaves kube-proxy\'s exactly as they were', async () => {
    const pod2 = need().pod('node-a1-pod2');
    theirs = saved(node, 'KUBE-');
    const r = await (await fresh(ourConfig)).sync({ state: stateOf(ourConfig, [port('default/ours:http', OUR_IP, [pod2])]), changedServices: null });
    expect(r).toMatchObject({ mode: 'full', detail: { deletedChains: 2, jumpsInserted: 0 } });
    expect(saved(node, 'KUBE-')).toEqual(theirs);
    expect(saved(node, 'KUBE-FIREWALL')).toContain('filter -A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP');
  });

  step('after both resyncs each ClusterIP still answers through its own rules, and the dropped ones through nobody\'s', async () => {
    const pod1 = need().pod('node-a1-pod1');
    expect(await reply(pod1.ns, OUR_IP)).toEqual(['node-a1-pod2']);
    expect(await reply(pod1.ns, THEIR_IP)).toEqual(['node-a1-pod1']);
    const gone = await need().connect(pod1.ns, OUR_GONE_IP, 80, 1, 300);
    expect(Object.keys(gone)).not.toContain('node-a1-pod1');
  });

  step('the migration\'s end: kube-proxy stops (its rules stay), the agent restarts in kube-proxy mode, takes over KUBE- and removes every SLICEMESH- chain and jump', async () => {
    const [pod1, pod2] = [need().pod('node-a1-pod1'), need().pod('node-a1-pod2')];
    const config = parseProxyAgentConfig([], { NODE_NAME: 'node-a1', IPTABLES_CHAINS: 'kube-proxy' });
    const r = await (await fresh(config)).sync({ state: stateOf(config, [port('kube-system/theirs:http', THEIR_IP, [pod1]), port('default/ours:http', OUR_IP, [pod2])]), changedServices: null });
    expect(r).toMatchObject({ mode: 'full', detail: { leftoverChainsDeleted: 11 } }); // nat: 4 fixed + SVC + SEP; filter: 5 fixed
    expect(saved(node, 'SLICEMESH-')).toEqual([]);
    for (const table of ['filter', 'nat']) expect(run(node, 'iptables-save', ['-t', table])).not.toContain('SLICEMESH-');
    expect(saved(node, 'KUBE-PROXY-CANARY')).toHaveLength(3);
    expect(await reply(pod1.ns, OUR_IP)).toEqual(['node-a1-pod2']);
    expect(await reply(need().client, THEIR_IP)).toEqual(['node-a1-pod1']);
  });
});
