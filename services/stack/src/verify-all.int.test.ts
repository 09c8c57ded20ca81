// verifyAll on a real stack (default scenario, publisher writing, one agent per zone): once the
// cluster is frozen and the stack settled, the three checks pass; then a difference planted in
// each place a check reads — an endpoint dropped from a slice in Postgres, a zone hint changed
// in a hinted KV entry, a stale rule in an agent's rules file — makes that check fail, saying
// which Service, endpoint or agent differs.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { hintedKey, kvPutJson, openKv } from '@slicemesh/nats';
import { freshRunNames, newRunId } from './run-names.ts';
import { deleteRunState } from './run-state.ts';
import type { Stack } from './start-stack.ts';
import { startStack } from './start-stack.ts';
import { verifyAll } from './verify-all.ts';

const NATS = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const PG = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CLUSTER = 'verifytest';
const run = freshRunNames(newRunId(Date.now()));
let dir: string;
let stack: Stack;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slicemesh-verify-'));
  stack = await startStack({ natsUrl: NATS, databaseUrl: PG, run, cluster: CLUSTER, speed: 4, agents: 'zone', publisherMode: 'write', runDir: join(dir, 'run'), logLevel: 'silent' });
  await stack.ready;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await deleteRunState(NATS, PG, run);
  await rm(dir, { recursive: true, force: true });
});

describe('verifyAll on a settled stack', () => {
  it('passes all three checks, and each fails on a difference planted where it reads', async () => {
    await new Promise((r) => setTimeout(r, 4000)); // some of the scenario's churn
    stack.sim?.driver.stop();
    await stack.settled({ timeoutMs: 60_000 });

    const ok = await verifyAll(stack);
    expect(ok.problems).toEqual([]);
    expect({ replay: ok.replay, truth: ok.truth, agents: ok.agents }).toEqual({ replay: true, truth: true, agents: true });
    expect(ok.summary[0]).toMatch(/^verify: replay identical \(\d+ services\)$/);
    expect(ok.summary[1]).toMatch(/^verify: truth identical \(\d+ services\)$/);
    expect(ok.summary[2]).toBe('verify: agents identical (3 agents)');

    // (b) an endpoint dropped from the slicer's slice in Postgres, a zone hint changed in a hinted entry.
    const victim = await stack.db.selectFrom('endpoint_slices').select(['namespace', 'name', 'service', 'body']).where('cluster', '=', CLUSTER).where('service', '=', 'web').executeTakeFirstOrThrow();
    const dropped = victim.body.endpoints[0]?.addresses[0] as string;
    expect(dropped).toBeDefined();
    await stack.db.updateTable('endpoint_slices').set({ body: JSON.stringify({ ...victim.body, endpoints: victim.body.endpoints.slice(1) }) }).where('cluster', '=', CLUSTER).where('namespace', '=', victim.namespace).where('name', '=', victim.name).execute();
    const kv = await openKv(stack.nc, run.names.hinted);
    const key = hintedKey({ cluster: CLUSTER, namespace: victim.namespace, service: victim.service, slice: victim.name });
    const hinted = (await kv.get(key))?.json<EndpointSlice>() as EndpointSlice;
    const rehinted = hinted.endpoints[1]?.addresses[0] as string;
    await kvPutJson(kv, key, { ...hinted, endpoints: hinted.endpoints.map((e, i) => (i === 1 ? { ...e, hints: { forZones: [{ name: 'zone-nowhere' }] } } : e)) });

    // (c) a stale rule in one agent's ruleset.
    const agent = stack.agents[0];
    if (agent === undefined) throw new Error('no agent');
    const rules = await readFile(agent.rulesFile, 'utf8');
    expect(rules.startsWith('*filter\n')).toBe(true);
    await writeFile(agent.rulesFile, rules.replace('\nCOMMIT\n', '\n-A SLICEMESH-SERVICES -m comment --comment "planted" -j RETURN\nCOMMIT\n'));

    const bad = await verifyAll(stack, { agentWaitMs: 0 });
    expect({ replay: bad.replay, truth: bad.truth, agents: bad.agents }).toEqual({ replay: false, truth: false, agents: false });
    expect(bad.summary[1]).toMatch(/^verify: truth: \d+ differences \(\d+ services\)$/);
    // The agents are held to the live hinted slices, so the planted hint shows there too.
    expect(bad.summary[2]).toMatch(/^verify: agents: \d+ differences? \(3 agents\)$/);
    const svc = `${victim.namespace}/${victim.service}`;
    expect(bad.details.truth).toContainEqual(expect.stringMatching(new RegExp(`^slicer ${svc} IPv4: endpoint ${dropped.replace(/\./g, '\\.')} missing live`)));
    expect(rehinted).toBeDefined();
    expect(bad.details.truth).toContainEqual(expect.stringMatching(new RegExp(`^hinted ${svc} IPv4: zone hints live .*\\[zone-nowhere\\]×1.* planned `)));
    // The first table block is the filter table's.
    expect(bad.details.agents).toContainEqual(`agent ${agent.node}: filter SLICEMESH-SERVICES: stale rule: -A SLICEMESH-SERVICES -m comment --comment "planted" -j RETURN`);
    expect(bad.problems.every((p) => /^(replay|truth|agents): /.test(p))).toBe(true);
  });
});
