// D.4.15 through the whole agent: IPTABLES_CHAINS picks the names and the default mark that
// reach the kernel (the fake iptables) and the dry-run rules file.

import { KUBE_PROXY_CHAINS, renderIptablesFull } from '@slicemesh/dataplane';
import { describeTrace, dpEndpoint, dpServicePort, dpState, traceIptables } from '@slicemesh/dataplane/testing';
import { FakeIptables, RecordingExec } from '@slicemesh/netfilter/testing';
import { createLogger, createMetrics, settle } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import { parseProxyAgentConfig } from './config.ts';
import { startProxyAgent } from './proxy-agent.ts';
import { FakeKvSource, endpoint, service, slice, svcPut, viewPut } from './test-support.ts';

const C = 'c1';

/** The agent's first sync with `env`, on a fake kernel that already holds `preload` (restore text). */
async function run(env: Record<string, string>, preload?: string) {
  const config = parseProxyAgentConfig([], { NODE_NAME: 'node-a1', NODE_ZONE: 'zone-a', CLUSTER: C, POD_CIDR: '10.244.0.0/16', ...env });
  const ipt = new FakeIptables();
  const rec = new RecordingExec([ipt]);
  if (preload !== undefined) await rec.exec({ command: 'iptables-restore', args: ['--noflush'], input: preload });
  const services = new FakeKvSource();
  const views = new FakeKvSource();
  services.put(svcPut(C, service('web', '10.96.0.10')));
  views.put(viewPut(C, 'zone-a', slice('web-1', 'web', [endpoint('10.244.1.2')])));
  const files = new Map<string, string>();
  const agent = startProxyAgent(config, {
    sources: { services, views },
    exec: rec.exec,
    writeFile: async (p, t) => void files.set(p, t),
    log: createLogger({ service: 'proxy-agent', level: 'silent' }),
    metrics: createMetrics('proxy-agent-test'),
  });
  await agent.ready;
  for (let i = 0; i < 5; i++) await settle();
  await agent.close();
  const nat = ipt.userChains('nat');
  const builtins = ['PREROUTING', 'OUTPUT', 'POSTROUTING'].flatMap((c) => ipt.rules('nat', c)).concat(['INPUT', 'FORWARD', 'OUTPUT'].flatMap((c) => ipt.rules('filter', c)));
  const restored = rec.callsTo('iptables-restore').map((c) => c.input ?? '').join('\n');
  return { nat, filter: ipt.userChains('filter'), builtins, restored, file: [...files.values()].join('\n'), reach: describeTrace(traceIptables(ipt.tables, { sourceIP: '10.244.9.9', destIP: '10.96.0.10', destPort: 80 }, { nodeIPs: [] })) };
}

describe('D.4.15 IPTABLES_CHAINS through the agent', () => {
  it('by default the kernel gets SLICEMESH- chains and mark 0x2000, and nothing named KUBE-', async () => {
    const r = await run({});
    expect(r.nat).toContain('SLICEMESH-SERVICES');
    expect(r.nat.some((c) => /^SLICEMESH-SVC-[A-Z2-7]{14}$/.test(c))).toBe(true);
    expect(r.nat.filter((c) => c.startsWith('KUBE-'))).toEqual([]);
    expect(r.restored).toContain('--or-mark 0x2000');
    expect(r.reach).toBe('10.244.1.2:8080');
  });

  it('kube-proxy mode: kube-proxy\'s names and mark 0x4000', async () => {
    const r = await run({ IPTABLES_CHAINS: 'kube-proxy' });
    expect(r.nat).toContain('KUBE-SERVICES');
    expect(r.nat.some((c) => /^KUBE-SVC-[A-Z2-7]{16}$/.test(c))).toBe(true);
    expect(r.nat.filter((c) => c.startsWith('SLICEMESH-'))).toEqual([]);
    expect(r.restored).toContain('--or-mark 0x4000');
    expect(r.reach).toBe('10.244.1.2:8080');
  });

  // What an agent beside kube-proxy left: our chains, and kube-proxy's (still running, or stopped).
  const besideKubeProxy = [
    renderIptablesFull(dpState([dpServicePort('default/old:http', { clusterIP: '10.96.0.10', endpoints: [dpEndpoint('10.244.1.9', { port: 8080 })] })], { masqueradeBit: 13 })),
    renderIptablesFull(dpState([dpServicePort('default/web:http', { clusterIP: '10.96.0.10', endpoints: [dpEndpoint('10.244.1.3', { port: 8080 })] })]), KUBE_PROXY_CHAINS),
  ].join('');

  it('switching to kube-proxy mode (kube-proxy gone) removes every chain and jump an earlier run left under our own names', async () => {
    const r = await run({ IPTABLES_CHAINS: 'kube-proxy' }, besideKubeProxy);
    expect([...r.nat, ...r.filter, ...r.builtins].filter((x) => x.includes('SLICEMESH-'))).toEqual([]);
    expect(r.nat).toContain('KUBE-SERVICES');
    // The old SLICEMESH- rules pointed at 10.244.1.9 and sat first; now the agent's KUBE- rules decide.
    expect(r.reach).toBe('10.244.1.2:8080');
  });

  it('in own mode kube-proxy\'s chains stay whatever they hold', async () => {
    const r = await run({}, besideKubeProxy);
    expect(r.nat.filter((c) => c.startsWith('KUBE-'))).toHaveLength(6); // 4 fixed, SVC, SEP
    expect(r.builtins.filter((x) => x.includes('KUBE-'))).toHaveLength(12);
    // kube-proxy inserted its jumps after ours and ours are only re-inserted when missing, so
    // its jump sits first: a ClusterIP both proxies know goes where kube-proxy sends it.
    expect(r.reach).toBe('10.244.1.3:8080');
  });

  const dryRun: { name: string; env: Record<string, string>; has: RegExp[]; lacks: string }[] = [
    { name: 'the dry-run rules file shows our names by default', env: {}, has: [/^:SLICEMESH-SVC-[A-Z2-7]{14} - \[0:0\]$/m, /-j SLICEMESH-SERVICES$/m], lacks: 'KUBE-' },
    { name: 'and kube-proxy\'s in kube-proxy mode', env: { IPTABLES_CHAINS: 'kube-proxy' }, has: [/^:KUBE-SVC-[A-Z2-7]{16} - \[0:0\]$/m, /-j KUBE-SERVICES$/m], lacks: 'SLICEMESH-' },
  ];
  for (const tc of dryRun) {
    it(tc.name, async () => {
      const r = await run({ BACKEND: 'dry-run', DRY_RUN_FILE: '/out/rules', ...tc.env });
      for (const re of tc.has) expect(r.file).toMatch(re);
      expect(r.file).not.toContain(tc.lacks);
    });
  }
});
