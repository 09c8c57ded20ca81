// Issue 10 part 4 on the real kernel: an agent restarted on a programmed node keeps the rules
// that are still right. Its first (full) sync reads the node once and writes only the chains
// whose rules differ from what iptables-save prints back, deletes what went stale, and the
// rules end as a fresh agent would make them. The services cover every kind of rule the
// renderer writes, so each kind is shown to be recognised when unchanged. Skips with the
// reason when namespaces cannot be made.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { OWN_CHAINS, renderIptables } from '@slicemesh/dataplane';
import type { Exec, ExecRequest } from '@slicemesh/netfilter';
import { IptablesRestorer, netnsExec, spawnExec } from '@slicemesh/netfilter';
import { missingTools, netnsAddFailure } from '@slicemesh/netfilter/testing/netns-lab';
import { realClock } from '@slicemesh/runtime';
import { RESTART_PORTS, restartState, restartWeb } from './restart-fixture.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IptablesBackend } from './backends/iptables-backend.ts';

const failure = netnsAddFailure();
const tools = missingTools(['iptables-restore', 'iptables-save']);
const unavailable = failure !== null ? `cannot create network namespaces: ${failure}` : tools.length > 0 ? `missing tools: ${tools.join(', ')}` : null;
const id = randomUUID().slice(0, 6);

const web = restartWeb;
const PORTS = RESTART_PORTS;
const state = restartState;

function run(ns: string, cmd: string, args: readonly string[]): string {
  const r = spawnSync('ip', ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${ns}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Our chains and rules as iptables-save prints them, counters dropped. */
const ours = (ns: string): string[] =>
  ['filter', 'nat'].flatMap((t) =>
    run(ns, 'iptables-save', ['-t', t])
      .split('\n')
      .filter((l) => l.includes('SLICEMESH-'))
      .map((l) => `${t} ${l.replace(/ \[\d+:\d+\]$/, '')}`),
  );

function agent(ns: string): { backend: IptablesBackend; restores: () => string[] } {
  const calls: ExecRequest[] = [];
  const real = netnsExec(spawnExec(), ns);
  const exec: Exec = (req) => (calls.push(req), real(req));
  const backend = new IptablesBackend({ restorer: new IptablesRestorer({ exec }), clock: realClock, jumpCheckIntervalMs: 30_000 });
  return { backend, restores: () => calls.filter((c) => c.command === 'iptables-restore').map((c) => c.input ?? '') };
}

const declared = (script: string): string[] => script.split('\n').filter((l) => l.startsWith(':'));

describe(`a restarted agent keeps what the kernel holds (iptables)${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const [node, fresh] = [`smrs${id}n`, `smrs${id}f`];
  beforeAll(() => {
    if (unavailable) return;
    for (const ns of [node, fresh]) spawnSync('ip', ['netns', 'add', ns]);
  });
  afterAll(() => {
    for (const ns of [node, fresh]) spawnSync('ip', ['netns', 'delete', ns]);
  });
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      await fn();
    });

  step('the same services: every chain is recognised, nothing is written', async () => {
    await agent(node).backend.sync({ state: state(PORTS), changedServices: null });
    const before = ours(node);
    const restarted = agent(node);
    const r = await restarted.backend.sync({ state: state(PORTS), changedServices: null });
    expect(r.mode).toBe('full');
    expect(restarted.restores().flatMap(declared)).toEqual([]);
    expect(ours(node)).toEqual(before);
  });

  step('changed while it was down: only the changed chains and the dispatch chain are written, the stale go, the result equals a fresh agent', async () => {
    const next = [web(2), ...PORTS.slice(1, -1)]; // one endpoint fewer for web, ns2/internal gone
    const restarted = agent(node);
    await restarted.backend.sync({ state: state(next), changedServices: null });
    const written = restarted.restores().flatMap(declared).map((l) => l.slice(1).split(' ')[0] ?? '');
    // No chain of a service that did not change is written again.
    const untouched = PORTS.slice(1, -1).flatMap((sp) => renderIptables(state([sp])).chains.nat.filter((c) => OWN_CHAINS.isServiceChain(c)));
    expect(untouched.length).toBeGreaterThan(10);
    expect(written.filter((c) => untouched.includes(c))).toEqual([]);
    // web's SVC chain and its stale SEP (its other SEPs are unchanged), internal's stale SVL
    // and SEP, and the dispatch chain.
    expect(written).toHaveLength(5);
    expect(written).toContain('SLICEMESH-SERVICES');
    await agent(fresh).backend.sync({ state: state(next), changedServices: null });
    expect(ours(node).sort()).toEqual(ours(fresh).sort());
  });
});
