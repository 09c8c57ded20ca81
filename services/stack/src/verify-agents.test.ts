import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { parseProxyAgentConfig } from '@slicemesh/proxy-agent';
import { autoService, ep, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import type { ProxyInputState } from './verify-agents.ts';
import { checkAgents, compareRules, expectedAgentRules, ruleSections } from './verify-agents.ts';
import { freshRunNames } from './run-names.ts';
import { agentEnv } from './service-env.ts';
import type { StackLayout } from './service-env.ts';

const layout: StackLayout = {
  natsUrl: 'nats://127.0.0.1:4222', databaseUrl: 'postgres://x', schema: 's', cluster: 'local', partitions: 2,
  names: freshRunNames('verifytest').names,
  kubeServer: 'http://127.0.0.1:1', batchPeriodMs: 100, ackWaitMs: 3000, logLevel: 'silent',
};
// The agent's configuration exactly as the stack gives it (agentEnv), for node n-a of zone-a.
const config = parseProxyAgentConfig([], agentEnv(layout, { node: 'n-a', zone: 'zone-a', nodeIPs: ['192.168.0.1'], rulesFile: '/x/n-a.rules' }, 0));

const nodes = [makeNode('n-a', { zone: 'zone-a', internalIP: '192.168.0.1' }), makeNode('n-b', { zone: 'zone-b', internalIP: '192.168.0.2' })];
const webSlice = (endpoints = [ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-a'] }), ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-b'] })]): EndpointSlice => makeSlice('web-1', endpoints);
const state = (slices: readonly EndpointSlice[] = [webSlice()]): ProxyInputState => ({
  services: [autoService('web'), makeService('db', { clusterIP: '10.96.0.20', selector: { app: 'db' } })],
  slices,
  nodes,
});

describe('expectedAgentRules', () => {
  it('renders the CLI\'s endpoint selection with the agent\'s settings: its zone\'s endpoint only, NodePorts on its node IP', async () => {
    const text = await expectedAgentRules(state(), config);
    expect(text).toMatch(/^\*nat$/m);
    expect(text).toContain('10.0.0.1');
    expect(text).not.toContain('10.0.0.2'); // the zone-b endpoint is hinted for zone-b only
    expect(text).toContain('default/web:http');
  });
});

describe('compareRules (verify agents)', () => {
  const base = ['*nat', ':SLICEMESH-SERVICES - [0:0]', ':SLICEMESH-SVC-A - [0:0]', '-A SLICEMESH-SERVICES -m comment --comment "ns/web:http" -j SLICEMESH-SVC-A', '-A SLICEMESH-SVC-A -j DNAT --to 10.0.0.1:80', '-A SLICEMESH-SVC-A -j DNAT --to 10.0.0.2:80', 'COMMIT', ''];
  const edit = (f: (lines: string[]) => void): string => {
    const l = [...base];
    f(l);
    return l.join('\n');
  };
  const cases: readonly { name: string; programmed: string; problems: readonly string[] }[] = [
    { name: 'the same ruleset passes', programmed: base.join('\n'), problems: [] },
    { name: 'comments, counters and blank lines do not matter', programmed: `# Generated\n${base.join('\n').replace('- [0:0]', '- [5:300]')}\n\n`, problems: [] },
    { name: 'a stale agent rule is reported', programmed: edit((l) => l.splice(6, 0, '-A SLICEMESH-SVC-A -j DNAT --to 10.0.0.9:80')), problems: ['agent n-a: nat SLICEMESH-SVC-A: stale rule: -A SLICEMESH-SVC-A -j DNAT --to 10.0.0.9:80'] },
    { name: 'a missing rule is reported', programmed: edit((l) => l.splice(5, 1)), problems: ['agent n-a: nat SLICEMESH-SVC-A: rule missing: -A SLICEMESH-SVC-A -j DNAT --to 10.0.0.2:80'] },
    { name: 'a missing chain is reported', programmed: edit((l) => l.splice(2, 1)), problems: ['agent n-a: nat: chain SLICEMESH-SVC-A missing'] },
    { name: 'a stale chain is reported', programmed: edit((l) => l.splice(2, 0, ':SLICEMESH-SVC-OLD - [0:0]')), problems: ['agent n-a: nat: stale chain SLICEMESH-SVC-OLD'] },
    { name: 'the same rules in another order are reported', programmed: edit((l) => l.splice(4, 2, base[5] as string, base[4] as string)), problems: ['agent n-a: nat SLICEMESH-SVC-A: the rules are right but in another order'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(compareRules('n-a', base.join('\n'), tc.programmed)).toEqual(tc.problems);
    });
  }

  it('text of another format is one section', () => {
    expect([...ruleSections('table ip x {\n  chain y {\n  }\n}\n').keys()]).toEqual(['ruleset']);
    expect(compareRules('n', 'a\nb\n', 'a\nc\n')).toEqual(['agent n: ruleset: rule missing: b', 'agent n: ruleset: stale rule: c']);
  });
});

describe('checkAgents', () => {
  const agent = { node: 'n-a', rulesFile: '/x/n-a.rules', config };
  const noSleep = async (): Promise<void> => {};

  it('an agent that programmed the expected rules passes', async () => {
    const rules = await expectedAgentRules(state(), config);
    expect(await checkAgents([agent], state(), { readRules: async () => rules, sleep: noSleep })).toEqual({ ok: true, agents: 1, problems: [] });
  });

  it('an agent still programming an endpoint that is gone is reported, naming the service port', async () => {
    // It programmed a state in which zone-a had a second endpoint; the final state has one.
    const stale = await expectedAgentRules(state([webSlice([ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-a'] }), ep('10.0.0.3', 'zone-a', 'n-a', { forZones: ['zone-a'] }), ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-b'] })])]), config);
    const r = await checkAgents([agent], state(), { readRules: async () => stale, sleep: noSleep, waitMs: 500 });
    expect(r.ok).toBe(false);
    expect(r.problems.some((p) => p.startsWith('agent n-a: nat ') && p.includes('stale rule') && p.includes('10.0.0.3'))).toBe(true);
    expect(r.problems.some((p) => p.includes('default/web:http'))).toBe(true);
  });

  it('an agent with wrong hints programs the other zone\'s endpoint, which is reported', async () => {
    const wrong = await expectedAgentRules(state([webSlice([ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-b'] }), ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-a'] })])]), config);
    const r = await checkAgents([agent], state(), { readRules: async () => wrong, sleep: noSleep, waitMs: 0 });
    expect(r.ok).toBe(false);
    expect(r.problems.some((p) => p.includes('10.0.0.2'))).toBe(true);
  });

  it('a missing rules file is reported', async () => {
    const r = await checkAgents([agent], state(), { readRules: async () => Promise.reject(new Error('ENOENT')), sleep: noSleep, waitMs: 0 });
    expect(r).toEqual({ ok: false, agents: 1, problems: ['agent n-a: no rules file /x/n-a.rules (ENOENT)'] });
  });

  it('an agent whose last sync lands while it is checked passes', async () => {
    const rules = await expectedAgentRules(state(), config);
    const reads = ['', rules];
    let i = 0;
    const r = await checkAgents([agent], state(), { readRules: async () => reads[Math.min(i++, 1)] as string, sleep: noSleep });
    expect(r.ok).toBe(true);
    expect(i).toBe(2);
  });
});
