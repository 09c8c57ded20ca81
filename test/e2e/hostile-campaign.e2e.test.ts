// The hostile campaign: a thousand generated hostile inputs (support/hostile-objects.ts) through
// the live pipeline while a churning scenario runs — served by the API through a rewriting
// proxy, or published straight to KUBE as rogue messages. No service crashes or restarts, none
// derives a slice or view from them, each rejected input is in the DLQ exactly once with its
// field and reason, the legal-but-hostile-looking ones are published and not dead-lettered,
// and the valid neighbours converge to the offline answer.
//
// Exactly once: a dead letter's Nats-Msg-Id is a hash of its content, and every hostile object
// is served as the same text however often the watcher sees it (list, watch, re-list, the
// placeholder's own updates), so a repeated rejection is stored once — a second letter means a
// rejection that changed between sightings.

import { describe, expect, it } from 'vitest';
import { parseScenario, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import type { KubeChangeEvent } from '@slicemesh/kube';
import { startApiProxy } from '@slicemesh/kube/testing';
import { dlqSubject } from '@slicemesh/nats';
import { expectLiveEqualsOffline, readDeadLetters, readStreamOf, scenarioFinished, startFixture } from './support/fixture.ts';
import type { Category, Rejection, ServedCase } from './support/hostile-objects.ts';
import { CATEGORIES, HOSTILE_NS, NOWHERE_NODE, PLACEHOLDER_PREFIX, hostileCampaign } from './support/hostile-objects.ts';
import { proxiedRunSlots } from './support/proxied-run.ts';
import { churnScenario } from './support/scenarios.ts';

const run = proxiedRunSlots();

const CLUSTER = 'local';
const PARTITIONS = 2;
const COUNT = 1000;
const SEED = 'campaign-1';
const isPlaceholder = (name: string): boolean => name.startsWith(PLACEHOLDER_PREFIX);
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The valid object the simulator holds for a case; the proxy serves the hostile one instead. */
function placeholder(c: ServedCase): KubeObj {
  const meta = { name: c.id, namespace: HOSTILE_NS };
  switch (c.kind) {
    case 'Service':
      return { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { ports: [{ port: 80 }] } } as KubeObj;
    case 'Pod':
      return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec: { nodeName: NOWHERE_NODE, containers: [{ name: 'c' }] } } as KubeObj;
    case 'Node':
      return { apiVersion: 'v1', kind: 'Node', metadata: { name: c.id }, spec: { unschedulable: true }, status: {} } as KubeObj;
    case 'Endpoints':
      return { apiVersion: 'v1', kind: 'Endpoints', metadata: meta, subsets: [{ addresses: [{ ip: '10.99.0.1' }], ports: [{ port: 80 }] }] } as KubeObj;
  }
}

/** Why a letter does not match its expectation, or null. */
function mismatch(letter: { field?: string; reason: string }, want: Rejection): string | null {
  const field = letter.field ?? '';
  const fieldOk = typeof want.field === 'string' ? field === want.field : want.field.test(field);
  if (!fieldOk || !want.reason.test(letter.reason)) return `got field ${JSON.stringify(field)} reason ${JSON.stringify(letter.reason)}, want ${String(want.field)} ${String(want.reason)}`;
  return null;
}

const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number);
};

describe('hostile campaign', () => {
  it('a thousand hostile inputs: each dead-lettered once with its reason, legal look-alikes published, no crash, no slice, neighbours converge', async () => {
    const started = performance.now();
    const campaign = hostileCampaign({ seed: SEED, count: COUNT, cluster: CLUSTER, partitions: PARTITIONS });
    const byId = new Map(campaign.served.map((c) => [c.id, c]));

    const sim = (run.sim = await startClusterSim({ scenario: parseScenario(churnScenario({ seed: 'e2e-hostile-campaign', durationSeconds: 12 }), 'e2e-hostile-campaign'), speed: 3 }));
    const proxy = (run.proxy = await startApiProxy(sim.url));
    // One body per case, built at its first sighting with that resourceVersion, so every later
    // sighting serves the same text (see the file comment).
    const bodies = new Map<string, unknown>();
    const servedAt = new Map<string, number>();
    proxy.mutate = (o) => {
      const m = o['metadata'] as { name?: string; resourceVersion?: string } | undefined;
      const c = byId.get(m?.name ?? '');
      if (c === undefined || c.kind !== o['kind']) return o;
      if (!bodies.has(c.id)) {
        bodies.set(c.id, c.body(m?.resourceVersion ?? '1'));
        servedAt.set(c.marker, Date.now());
      }
      return bodies.get(c.id);
    };

    const s = sim as ClusterSim;
    s.store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HOSTILE_NS } } as KubeObj);
    const half = Math.ceil(campaign.served.length / 2);
    for (const c of campaign.served.slice(0, half)) s.store.create(c.kind, placeholder(c)); // in the initial lists

    // Legal names that look hostile, in the simulator itself so the oracle covers them: a Service
    // whose selector and port use Object.prototype's names, selecting dotted, double-dashed and
    // 253-character pods; a node named like a JetStream API subject (not ready: no hint moves).
    const protoLabels = { constructor: 'prototype', toString: 'valueOf', hasOwnProperty: '' };
    s.store.create('Service', {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'constructor', namespace: 'shop' },
      spec: { selector: protoLabels, ports: [{ name: 'constructor', port: 80, targetPort: 8080 }] },
    } as KubeObj);
    const legalPods = ['js.api.stream.delete.kube', 'a--b', `${'q'.repeat(63)}.${'q'.repeat(63)}.${'q'.repeat(63)}.${'q'.repeat(61)}`];
    for (const name of legalPods) {
      s.store.create('Pod', {
        apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop', labels: protoLabels },
        spec: { containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] },
      } as KubeObj);
    }
    s.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'js.api.stream.purge.slices' }, spec: { unschedulable: true }, status: {} } as KubeObj);

    const f = (run.f = await startFixture({ sim, kubeServer: proxy.url, agents: 'zone', partitions: PARTITIONS }));
    const { stack } = f;
    await stack.ready;
    const pids = new Map(stack.components().map((c) => [c.name, c.pid()]));

    // The rest through the watches, and the rogue messages straight into KUBE, in batches.
    const prefix = stack.run.names.prefix;
    const publishedAt = new Map<string, number>();
    const rest = campaign.served.slice(half);
    for (let i = 0; i < Math.max(rest.length, campaign.rogue.length); i += 50) {
      for (const c of rest.slice(i, i + 50)) s.store.create(c.kind, placeholder(c));
      await Promise.all(campaign.rogue.slice(i, i + 50).map(async (r) => {
        publishedAt.set(r.id, Date.now());
        await f.js.js.publish(`${prefix}${r.subject}`, r.data, { msgID: `rogue/${r.id}` });
      }));
      await pause(20);
    }

    await scenarioFinished(sim);
    const expected = await expectLiveEqualsOffline(f, isPlaceholder);
    for (const name of legalPods) expect([...expected.slices.values()].some((x) => x.includes(name)), name).toBe(true);

    // Every rejection in the DLQ (the watcher's letters arrive well before the neighbours settle;
    // poll a little for the slicer's last ones).
    const watcherAt = dlqSubject(CLUSTER, 'watcher', { prefix });
    const slicerAt = dlqSubject(CLUSTER, 'slicer', { prefix });
    const rejected = campaign.served.filter((c) => c.expect !== 'accepted');
    const accepted = campaign.served.filter((c) => c.expect === 'accepted');
    let letters = await readDeadLetters(f);
    for (let tries = 0; tries < 20; tries++) {
      const seen = letters.filter((l) => l.subject === watcherAt || l.subject === slicerAt).length;
      if (seen >= rejected.length + campaign.rogue.length) break;
      await pause(1000);
      letters = await readDeadLetters(f);
    }
    const fromWatcher = letters.filter((l) => l.subject === watcherAt);
    const fromSlicer = letters.filter((l) => l.subject === slicerAt);

    const problems: string[] = [];
    const latencies: number[] = [];
    for (const c of campaign.served) {
      const mine = fromWatcher.filter((l) => l.body.object.includes(c.marker));
      if (c.expect === 'accepted') {
        if (mine.length > 0) problems.push(`${c.id} (${c.category} ${c.kind}) legal but dead-lettered: ${mine[0]?.body.field} ${mine[0]?.body.reason}`);
        continue;
      }
      if (mine.length !== 1) {
        problems.push(`${c.id} (${c.category} ${c.kind}): ${mine.length} dead letters, want 1 (${String(c.expect.field)} ${String(c.expect.reason)})`);
        continue;
      }
      const letter = mine[0]!;
      const why = mismatch(letter.body, c.expect);
      if (why !== null) problems.push(`${c.id} (${c.category} ${c.kind}): ${why}`);
      latencies.push(Date.parse(letter.body.at) - (servedAt.get(c.marker) ?? NaN));
    }
    for (const r of campaign.rogue) {
      const mine = fromSlicer.filter((l) => l.body.subject === `${prefix}${r.subject}`);
      if (mine.length !== 1) {
        problems.push(`${r.id} (${r.category}) on ${r.subject}: ${mine.length} slicer dead letters, want 1`);
        continue;
      }
      const why = mismatch(mine[0]!.body, r.expect);
      if (why !== null) problems.push(`${r.id} (${r.category}) on ${r.subject}: ${why}`);
      latencies.push(Date.parse(mine[0]!.body.at) - (publishedAt.get(r.id) ?? NaN));
    }
    // Reasons and fields are one printable ASCII line each, whatever the input held.
    for (const l of letters) {
      if (!/^[\x20-\x7e]*$/.test(`${l.body.field ?? ''}${l.body.reason}`)) problems.push(`letter ${l.seq}: unprintable reason or field ${JSON.stringify(l.body.reason)}`);
    }

    // Legal look-alikes reached KUBE; nothing rejected did, nothing hostile became a slice or view.
    const kube = await readStreamOf<KubeChangeEvent>(f, stack.run.names.kube);
    const fromOurWatcher = kube.filter((m) => m.msgID.startsWith(`${CLUSTER}/`)).map((m) => m.body.object.metadata.uid ?? '');
    const inKube = new Set(fromOurWatcher);
    for (const c of accepted) if (!inKube.has(c.marker)) problems.push(`${c.id} (${c.category} ${c.kind}) legal but not in KUBE`);
    for (const c of rejected) if ([...inKube].some((uid) => uid.startsWith(c.marker))) problems.push(`${c.id} (${c.category}) rejected yet in KUBE`);
    const rows = await stack.db.selectFrom('endpoint_slices').select(['namespace', 'name']).where('namespace', '=', HOSTILE_NS).execute();
    expect(rows).toEqual([]);

    expect(problems).toEqual([]);
    for (const c of stack.components()) {
      expect(c.isReady(), c.name).toBe(true);
      expect(c.pid(), `${c.name} restarted`).toBe(pids.get(c.name));
    }

    const perCategory = new Map<Category, number>();
    for (const c of [...campaign.served, ...campaign.rogue]) perCategory.set(c.category, (perCategory.get(c.category) ?? 0) + 1);
    const counts = CATEGORIES.filter((c) => perCategory.has(c)).map((c) => `${c}=${perCategory.get(c)}`).join(' ');
    process.stdout.write(
      `hostile campaign: ${campaign.served.length + campaign.rogue.length} inputs (served ${campaign.served.length}: ${rejected.length} rejected, ${accepted.length} legal; rogue KUBE ${campaign.rogue.length}) ` +
        `[${counts}] dead letters ${letters.length} (watcher ${fromWatcher.length}, slicer ${fromSlicer.length}, other ${letters.length - fromWatcher.length - fromSlicer.length}) ` +
        `latency p50 ${percentile(latencies, 50)} ms p99 ${percentile(latencies, 99)} ms, total ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
  }, 180_000);
});
