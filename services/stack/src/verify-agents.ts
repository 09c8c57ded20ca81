// verify (c) "agents": what each dry-run proxy agent programmed against what `slicemesh
// proxy-plan` computes for its node from the cluster's final state (the planned slices plus the
// other controllers', the API's Services and Nodes). The expected ruleset is the CLI's endpoint
// selection (dpState over proxyModel, libs/proxy-state) rendered with the agent's own node
// settings and renderer (its configuration as the stack gives it: node IPs, masquerade bit,
// chain names, dry-run format), so the two texts are comparable line for line.
//
// The comparison is per table and chain (iptables-restore input): the declared chains as a set,
// each chain's rules in order; a rule missing, a stale rule and a changed order are each reported
// with the rule, whose comment names the service port. Other formats compare as one section.

import { readFile } from 'node:fs/promises';
import { dpState } from '@slicemesh/cli';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import type { ProxyAgentConfig } from '@slicemesh/proxy-agent';
import { createBackend, dpStateOf, ipFamiliesOf, nodeSettingsOf } from '@slicemesh/proxy-agent';
import { realClock } from '@slicemesh/runtime';

/** The cluster's final state as proxy-plan reads it. */
export interface ProxyInputState {
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  readonly nodes: readonly Node[];
}

/**
 * The file the agent with `config` writes after a full sync of `state`: each of its families'
 * endpoint selection by the CLI's dpState (for the node's name, from the full slices and Nodes),
 * with the agent's node settings, rendered by the agent's own dry-run backend (the last family
 * written is what the file holds, as in the agent).
 */
export async function expectedAgentRules(state: ProxyInputState, config: ProxyAgentConfig): Promise<string> {
  let text = '';
  const capture = async (_path: string, t: string): Promise<void> => void (text = t);
  const exec = async (): Promise<never> => {
    throw new Error('the dry-run backend runs no command');
  };
  for (const family of ipFamiliesOf(config)) {
    const servicePorts = dpState({ services: state.services, slices: state.slices, nodes: state.nodes, nodeName: config.nodeName }, family, config.iptablesChains).servicePorts;
    const backend = await createBackend({ ...config, ipFamily: family, backend: 'dry-run' }, { exec, clock: realClock, writeFile: capture });
    await backend.sync({ state: dpStateOf(servicePorts, nodeSettingsOf(config, family)), changedServices: null });
  }
  return text;
}

/** A ruleset split into comparable sections: `<table> <chain>` → its rules in order; `<table> :chains` → the declared chains. */
export type RuleSections = ReadonlyMap<string, readonly string[]>;

/**
 * Splits iptables-restore input into sections (comments, COMMIT and blank lines dropped;
 * declarations without their counters). Text of another format is one section, `ruleset`.
 */
export function ruleSections(text: string): RuleSections {
  const out = new Map<string, string[]>();
  const add = (k: string, line: string): void => {
    const list = out.get(k);
    if (list === undefined) out.set(k, [line]);
    else list.push(line);
  };
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '' && !l.startsWith('#'));
  const iptables = lines.some((l) => /^\*[a-z]+$/.test(l));
  let table = '';
  for (const line of lines) {
    if (!iptables) add('ruleset', line);
    else if (line.startsWith('*')) table = line.slice(1);
    else if (line === 'COMMIT') continue;
    else if (line.startsWith(':')) add(`${table} :chains`, line.split(' ')[0] as string);
    else {
      const m = /^-[AI] (\S+) /.exec(line);
      add(m === null ? `${table} (other)` : `${table} ${m[1]}`, line);
    }
  }
  for (const [k, v] of out) if (k.endsWith(' :chains')) v.sort();
  return out;
}

function counts(lines: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
}

/**
 * Every difference between the expected and the programmed ruleset of agent `node`, one line
 * each: a declared chain missing or stale, a rule missing from a chain, a stale rule in it, a
 * chain whose rules are all there but in another order. [] when equal.
 */
export function compareRules(node: string, expected: string, programmed: string): string[] {
  const want = ruleSections(expected);
  const have = ruleSections(programmed);
  const out: string[] = [];
  for (const section of [...new Set([...want.keys(), ...have.keys()])].sort()) {
    const w = want.get(section) ?? [];
    const h = have.get(section) ?? [];
    if (w.length === h.length && w.every((l, i) => l === h[i])) continue;
    const declared = section.endsWith(' :chains');
    const table = section.slice(0, section.indexOf(' '));
    const wc = counts(w);
    const hc = counts(h);
    const before = out.length;
    for (const [line, n] of wc) {
      for (let i = hc.get(line) ?? 0; i < n; i++) out.push(`agent ${node}: ${declared ? `${table}: chain ${line.slice(1)} missing` : `${section}: rule missing: ${line}`}`);
    }
    for (const [line, n] of hc) {
      for (let i = wc.get(line) ?? 0; i < n; i++) out.push(`agent ${node}: ${declared ? `${table}: stale chain ${line.slice(1)}` : `${section}: stale rule: ${line}`}`);
    }
    if (out.length === before) out.push(`agent ${node}: ${section}: the rules are right but in another order`);
  }
  return out;
}

export interface AgentToCheck {
  readonly node: string;
  readonly rulesFile: string;
  readonly config: ProxyAgentConfig;
}

export interface AgentsResult {
  readonly ok: boolean;
  readonly agents: number;
  readonly problems: readonly string[];
}

export interface CheckAgentsOptions {
  /** How long a differing agent may take to catch up (its last sync may still be under way), ms. Defaults to 5000. */
  readonly waitMs?: number;
  readonly readRules?: (file: string) => Promise<string>;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Each agent's rules file against its expected ruleset; a missing file is a difference. */
export async function checkAgents(agents: readonly AgentToCheck[], state: ProxyInputState, opts: CheckAgentsOptions = {}): Promise<AgentsResult> {
  const read = opts.readRules ?? ((f: string) => readFile(f, 'utf8'));
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const waitMs = opts.waitMs ?? 5000;
  const problems: string[] = [];
  for (const a of agents) {
    const expected = await expectedAgentRules(state, a.config);
    let found: string[] = [];
    for (let waited = 0; ; waited += 250) {
      let programmed: string | undefined;
      try {
        programmed = await read(a.rulesFile);
      } catch (e) {
        found = [`agent ${a.node}: no rules file ${a.rulesFile} (${e instanceof Error ? e.message : String(e)})`];
      }
      if (programmed !== undefined) found = compareRules(a.node, expected, programmed);
      if (found.length === 0 || waited >= waitMs) break;
      await sleep(250);
    }
    problems.push(...found);
  }
  return { ok: problems.length === 0, agents: agents.length, problems };
}
