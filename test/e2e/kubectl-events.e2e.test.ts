// The controllers' Events as a platform engineer sees them with kubectl: the stack runs on the
// static scenario with the publisher in write mode; kubectl creates a Service annotated for Auto
// hints whose two endpoints cannot cover three zones, and `kubectl describe svc` then shows
// upstream's TopologyAwareHintsDisabled Warning from endpoint-slice-controller — recorded once
// per reconcile by the hints service, written by the publisher's event writer, counted rather
// than duplicated. The web Service, whose hints are on, shows TopologyAwareHintsEnabled.

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { STATIC_SCENARIO_FILE } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { startFixture } from './support/fixture.ts';
import type { StackFixture } from './support/fixture.ts';

const run = promisify(execFile);

let f: StackFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

async function kubectl(sim: ClusterSim, args: readonly string[], stdin?: string): Promise<string> {
  const child = run('kubectl', ['--server', sim.url, ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (stdin !== undefined) {
    child.child.stdin?.end(stdin);
  }
  return (await child).stdout;
}

interface EventItem {
  readonly reason: string;
  readonly type: string;
  readonly message: string;
  readonly count?: number;
  readonly source?: { readonly component?: string };
  readonly involvedObject: { readonly kind: string; readonly name: string; readonly uid?: string };
}

async function eventsOf(sim: ClusterSim, name: string): Promise<EventItem[]> {
  const out = await kubectl(sim, ['get', 'events', '-n', 'shop', '--field-selector', `involvedObject.kind=Service,involvedObject.name=${name}`, '-o', 'json']);
  return (JSON.parse(out) as { items: EventItem[] }).items;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const t0 = performance.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const CACHE_AUTO = `apiVersion: v1
kind: Service
metadata:
  name: cache-auto
  namespace: shop
  annotations:
    service.kubernetes.io/topology-mode: Auto
spec:
  selector:
    app: cache
  ports:
    - name: redis
      port: 6379
      targetPort: 6379
`;

describe('kubectl sees the controllers’ Events', () => {
  it('A.13.5 a Service annotated Auto with too few endpoints gets upstream’s TopologyAwareHintsDisabled Warning in kubectl describe svc', async () => {
    f = await startFixture({ scenarioYaml: await readFile(STATIC_SCENARIO_FILE, 'utf8'), publisherMode: 'write', agents: 'none', partitions: 2 });
    await f.stack.ready;
    const sim = f.stack.sim as ClusterSim;

    const t0 = performance.now();
    await kubectl(sim, ['apply', '-f', '-'], CACHE_AUTO);
    const disabled = await until('TopologyAwareHintsDisabled on shop/cache-auto', async () => (await eventsOf(sim, 'cache-auto')).find((e) => e.reason === 'TopologyAwareHintsDisabled'));
    const ms = performance.now() - t0;
    const svc = JSON.parse(await kubectl(sim, ['get', 'svc', '-n', 'shop', 'cache-auto', '-o', 'json'])) as { metadata: { uid: string } };
    expect(disabled).toMatchObject({ type: 'Warning', source: { component: 'endpoint-slice-controller' }, involvedObject: { kind: 'Service', name: 'cache-auto', uid: svc.metadata.uid } });
    expect(disabled.message).toMatch(/, addressType: IPv4$/);

    const described = await kubectl(sim, ['describe', 'svc', '-n', 'shop', 'cache-auto']);
    expect(described).toMatch(/Events:[\s\S]*Warning\s+TopologyAwareHintsDisabled[\s\S]*endpoint-slice-controller/);

    const enabled = await until('TopologyAwareHintsEnabled on shop/web', async () => (await eventsOf(sim, 'web')).find((e) => e.reason === 'TopologyAwareHintsEnabled'));
    expect(enabled).toMatchObject({ type: 'Normal', message: 'Topology Aware Hints has been enabled, addressType: IPv4' });
    expect(await kubectl(sim, ['describe', 'svc', '-n', 'shop', 'web'])).toMatch(/Normal\s+TopologyAwareHintsEnabled/);

    // Every reconcile of cache-auto records the refusal again: one Event per message whose count
    // grows, never a second object. (A reconcile that ran before the pods' slice existed said
    // "0 endpoints": a different message, so upstream's recorder keeps it as an Event of its own.)
    await kubectl(sim, ['annotate', 'svc', '-n', 'shop', 'cache-auto', 'example.com/touch=1']);
    await until('the count to grow', async () => {
      const same = (await eventsOf(sim, 'cache-auto')).filter((e) => e.reason === 'TopologyAwareHintsDisabled');
      const byMessage = new Map<string, EventItem[]>();
      for (const e of same) byMessage.set(e.message, [...(byMessage.get(e.message) ?? []), e]);
      const full = byMessage.get('Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4') ?? [];
      return [...byMessage.values()].every((l) => l.length === 1) && (full[0]?.count ?? 0) >= 2 ? true : undefined;
    });
    process.stdout.write(`kubectl apply → TopologyAwareHintsDisabled visible in kubectl: ${ms.toFixed(0)} ms; message: ${disabled.message}\n${described.split('Events:')[1] ?? ''}\n`);
  });
});
