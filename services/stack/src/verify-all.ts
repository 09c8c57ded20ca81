// `npm start -- --verify`, callable: the three checks of a settled stack.
//  (a) replay: the KUBE log replayed into a scratch schema equals the live slices (replay.ts);
//  (b) truth:  the live slices (Postgres, and the hinted KV entries) equal, semantically, what
//              `slicemesh plan` computes from the cluster's final state read from the API server
//              (verify-truth.ts);
//  (c) agents: every dry-run agent's ruleset equals what `slicemesh proxy-plan` computes for its
//              node from that final state (verify-agents.ts).
// The caller freezes the cluster and waits until the stack is settled first (main.ts does).
// A check that throws counts as failed, with the error as its problem; the others still run.

import type { EndpointSlice } from '@slicemesh/model';
import { loadClusterSlices } from '@slicemesh/db';
import { jetstream, kvKeys, openKv, svcClusterFilter } from '@slicemesh/nats';
import { parseProxyAgentConfig } from '@slicemesh/proxy-agent';
import { slicerConfig } from '@slicemesh/slicer';
import type { Node, Service } from '@slicemesh/model';
import { replayIntoScratch } from './replay.ts';
import { agentEnv } from './service-env.ts';
import type { Stack } from './start-stack.ts';
import { checkAgents } from './verify-agents.ts';
import { compareTruth, listClusterObjects, planOf } from './verify-truth.ts';

/** What the checks read of a running stack. */
export type VerifiableStack = Pick<Stack, 'db' | 'nc' | 'run' | 'layout' | 'agents'>;

export interface VerifyOptions {
  /** The slicer's settings; default to its defaults (as the stack runs it). */
  readonly managedBy?: string;
  readonly maxEndpointsPerSlice?: number;
  /** How long an agent may take to catch up with the settled views, ms. Defaults to 5000. */
  readonly agentWaitMs?: number;
}

export interface VerifyResult {
  readonly replay: boolean;
  readonly truth: boolean;
  readonly agents: boolean;
  /** Every difference, each prefixed with its check: `replay: …`, `truth: …`, `agents: …`. */
  readonly problems: string[];
  /** One line per check, as `npm start -- --verify` prints them. */
  readonly summary: readonly [string, string, string];
  /** Each check's own differences (unprefixed). */
  readonly details: { readonly replay: readonly string[]; readonly truth: readonly string[]; readonly agents: readonly string[] };
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The live hinted entries of `cluster` (deleted ones left out). */
async function hintedSlices(stack: VerifiableStack): Promise<EndpointSlice[]> {
  const kv = await openKv(stack.nc, stack.run.names.hinted);
  const out: EndpointSlice[] = [];
  for (const k of await kvKeys(kv, svcClusterFilter(stack.layout.cluster))) {
    const e = await kv.get(k);
    if (e !== null && e.operation === 'PUT') out.push(e.json<EndpointSlice>());
  }
  return out;
}

/** Runs the three checks on a settled stack. Never throws for a difference or a failed check. */
export async function verifyAll(stack: VerifiableStack, opts: VerifyOptions = {}): Promise<VerifyResult> {
  const defaults = slicerConfig.parse([], {});
  const settings = { managedBy: opts.managedBy ?? defaults.managedBy, maxEndpointsPerSlice: opts.maxEndpointsPerSlice ?? defaults.maxEndpointsPerSlice };
  const l = stack.layout;

  let replay: { ok: boolean; problems: readonly string[]; line: string };
  try {
    const r = await replayIntoScratch({ db: stack.db, liveSchema: l.schema, databaseUrl: l.databaseUrl, js: jetstream(stack.nc), names: l.names, cluster: l.cluster, partitions: l.partitions, ...settings });
    replay = { ok: r.ok, problems: r.problems, line: r.ok ? `verify: replay identical (${r.services.length} services)` : `verify: replay: ${plural(r.problems.length, 'difference')} (${r.services.length} services)` };
  } catch (e) {
    replay = { ok: false, problems: [`failed: ${message(e)}`], line: `verify: replay: failed: ${message(e)}` };
  }

  // The final state, once, for both (b) and (c).
  let truth: { ok: boolean; problems: readonly string[]; line: string };
  let agents: { ok: boolean; problems: readonly string[]; line: string };
  try {
    const listed = await listClusterObjects(l.kubeServer);
    const planned = planOf(listed.objects, settings);
    const liveHinted = await hintedSlices(stack);
    try {
      const live = { slicer: (await loadClusterSlices(stack.db, l.cluster)).values(), hinted: liveHinted };
      const services = listed.objects.filter((o) => o.kind === 'Service').length;
      const r = compareTruth(planned.own, live, services);
      truth = { ok: r.ok, problems: r.problems, line: r.ok ? `verify: truth identical (${services} services)` : `verify: truth: ${plural(r.problems.length, 'difference')} (${services} services)` };
    } catch (e) {
      truth = { ok: false, problems: [`failed: ${message(e)}`], line: `verify: truth: failed: ${message(e)}` };
    }
    try {
      const sliceKey = (x: EndpointSlice): string => `${x.metadata.namespace ?? ''}/${x.metadata.name ?? ''}`;
      const ownKeys = new Set(planned.own.map(sliceKey));
      const state = {
        services: listed.objects.filter((o): o is Service => o.kind === 'Service'),
        nodes: listed.objects.filter((o): o is Node => o.kind === 'Node'),
        // The agents program the slices as they are (hints included), which (b) holds to the
        // plan; which endpoints carry which zone's hint may differ from a plan from scratch.
        slices: [...liveHinted, ...planned.all.filter((x) => !ownKeys.has(sliceKey(x)))],
      };
      const toCheck = stack.agents.map((a) => ({ node: a.node, rulesFile: a.rulesFile, config: parseProxyAgentConfig([], agentEnv(l, a, 0)) }));
      const r = await checkAgents(toCheck, state, opts.agentWaitMs !== undefined ? { waitMs: opts.agentWaitMs } : {});
      agents = { ok: r.ok, problems: r.problems, line: r.ok ? `verify: agents identical (${plural(r.agents, 'agent')})` : `verify: agents: ${plural(r.problems.length, 'difference')} (${plural(r.agents, 'agent')})` };
    } catch (e) {
      agents = { ok: false, problems: [`failed: ${message(e)}`], line: `verify: agents: failed: ${message(e)}` };
    }
  } catch (e) {
    const why = `cannot read the cluster's final state from ${l.kubeServer}: ${message(e)}`;
    truth = { ok: false, problems: [why], line: `verify: truth: failed: ${why}` };
    agents = { ok: false, problems: [why], line: `verify: agents: failed: ${why}` };
  }

  return {
    replay: replay.ok,
    truth: truth.ok,
    agents: agents.ok,
    problems: [...replay.problems.map((p) => `replay: ${p}`), ...truth.problems.map((p) => `truth: ${p}`), ...agents.problems.map((p) => `agents: ${p}`)],
    summary: [replay.line, truth.line, agents.line],
    details: { replay: replay.problems, truth: truth.problems, agents: agents.problems },
  };
}
