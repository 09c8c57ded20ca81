// The fast path's memo layers (pod records patched in place or rebuilt, port layouts per
// resolved named ports, node slots, the sorted identity registry with its put/merge/prune
// paths, leftovers found among the fresh endpoints) must never change a plan: a seeded
// evolution that stresses each layer compares every sync with the memo-free reference path
// (desired-reference.ts).

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Pod, Service, ServicePort } from '@slicemesh/model';
import { deepFreeze, makeNode, makePod, makeService } from '@slicemesh/testing';
import type { World } from './equivalence-harness.ts';
import { checkSync, rng } from './equivalence-harness.ts';
import { ipv4 } from './test-fixtures.ts';

// Two named target ports and a numeric one: pods fall into several port groups, and some
// resolve a port only through a sidecar or not at all (A.5.1).
const PORTS: readonly ServicePort[] = [
  { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
  { name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' },
  { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
];

function pod(i: number, r: () => number, gen: number): Pod {
  const http = r() < 0.9 ? [{ name: 'http', containerPort: r() < 0.7 ? 8080 : 8081, protocol: 'TCP' as const }] : [];
  const where = r();
  const metrics = where < 0.5 ? [{ name: 'metrics', containerPort: 9100, protocol: 'TCP' as const }] : [];
  const sidecar = where > 0.8 ? [{ name: 'agent', restartPolicy: where > 0.9 ? 'Always' : 'OnFailure', ports: [{ name: 'metrics', containerPort: 9200 }] }] : [];
  const v4 = ipv4(i + (r() < 0.05 ? 70_000 * (gen + 1) : 0));
  const kind = r();
  return deepFreeze(
    makePod(`p-${i}`, {
      ips: kind < 0.08 ? [`fd00::${i.toString(16)}`] : kind < 0.2 ? [v4, `fd00::${i.toString(16)}`] : [v4],
      ready: r() > 0.2,
      terminating: r() < 0.05,
      phase: r() < 0.02 ? 'Succeeded' : 'Running',
      nodeName: `n-${Math.floor(r() * 4)}`,
      hostname: r() < 0.1 ? `h${i}` : undefined,
      subdomain: 'svc',
      containerPorts: [...http, ...metrics],
      ...(sidecar.length > 0 ? { initContainers: sidecar } : {}),
    }),
  );
}

function service(spec: { ports: readonly ServicePort[]; dual: boolean; publishNotReady?: boolean; v?: number }): Service {
  return deepFreeze(
    makeService('svc', {
      ports: spec.ports,
      ipFamilies: spec.dual ? ['IPv4', 'IPv6'] : ['IPv4'],
      ...(spec.publishNotReady !== undefined ? { publishNotReadyAddresses: spec.publishNotReady } : {}),
      labels: { v: String(spec.v ?? 0) },
    }),
  );
}

function nodeMap(zones: readonly string[]): Map<string, Node> {
  return new Map(zones.map((z, i) => [`n-${i}`, deepFreeze(makeNode(`n-${i}`, { zone: z }))]));
}

// Each step changes one thing; the names say which memo layer the change exercises.
const steps: readonly { name: string; run: (w: World, r: () => number, step: number) => void }[] = [
  { name: 'a few pods replaced (memo patched, registry put path)', run: (w, r, step) => replace(w, r, step, 1 + Math.floor(r() * 4)) },
  { name: 'many pods replaced (registry merge path)', run: (w, r, step) => replace(w, r, step, 20 + Math.floor(r() * 60)) },
  { name: 'scale down to a tenth (registry prune)', run: (w) => void (w.pods = w.pods.slice(0, Math.ceil(w.pods.length / 10))) },
  { name: 'scale up', run: (w, r, step) => void (w.pods = [...w.pods, ...Array.from({ length: 10 + Math.floor(r() * 200) }, (_, k) => pod(5000 + step * 1000 + k, r, step))]) },
  { name: 'a segment reversed (pods found near their old position, or not)', run: (w, r) => void (w.pods = reverseSegment(w.pods, Math.floor(r() * w.pods.length), 30)) },
  { name: 'a duplicate pod name, maybe in another port group', run: (w, r, step) => void (w.pods = [...w.pods, pod(Number(w.pods[Math.floor(r() * w.pods.length)]?.metadata.name.slice(2)), r, step + 1)]) },
  {
    name: 'a node disappears (A.3.4 errors)',
    run: (w, r) => {
      w.nodes = new Map(w.nodes);
      w.nodes.delete(`n-${Math.floor(r() * 4)}`);
    },
  },
  { name: 'nodes come back as new objects, zones relabelled', run: (w, r) => void (w.nodes = nodeMap(['a', 'b', 'c', 'd'].map((z) => (r() < 0.5 ? z : `${z}2`)))) },
  { name: 'same ports object, publishNotReadyAddresses flipped', run: (w, r) => void (w.service = service({ ports: w.service.spec.ports ?? [], dual: w.service.spec.ipFamilies?.length === 2, publishNotReady: r() < 0.5 })) },
  { name: 'equal ports as a new object', run: (w) => void (w.service = service({ ports: (w.service.spec.ports ?? []).map((p) => ({ ...p })), dual: w.service.spec.ipFamilies?.length === 2 })) },
  { name: 'ports changed (named ↔ numeric, dropped)', run: (w, r) => void (w.service = service({ ports: r() < 0.5 ? PORTS : [{ ...PORTS[0], targetPort: r() < 0.5 ? 8080 : 'http' } as ServicePort], dual: w.service.spec.ipFamilies?.length === 2 })) },
  {
    name: 'an existing slice lost (held endpoints become leftovers)',
    run: (w, r) => {
      const lost = Math.floor(r() * w.slices.length);
      w.slices = w.slices.filter((_, i) => i !== lost);
    },
  },
  { name: 'slices re-read from storage (no producer links)', run: (w) => void (w.slices = w.slices.map((s) => deepFreeze(JSON.parse(JSON.stringify(s)) as EndpointSlice))) },
  { name: 'back to an older pod list', run: () => undefined },
];

function replace(w: World, r: () => number, step: number, n: number): void {
  const pods = [...w.pods];
  for (let k = 0; k < n && pods.length > 0; k++) {
    const i = Math.floor(r() * pods.length);
    pods[i] = pod(Number(pods[i]?.metadata.name.slice(2)), r, step);
  }
  w.pods = pods;
}

function reverseSegment(pods: readonly Pod[], from: number, n: number): Pod[] {
  return [...pods.slice(0, from), ...pods.slice(from, from + n).reverse(), ...pods.slice(from + n)];
}

describe('fast path == reference path under every memo layer', () => {
  for (const seed of [11, 12, 13, 14, 15, 16, 17, 18]) {
    it(`seeded evolution ${seed}: every change kind, each sync compared`, () => {
      const r = rng(seed);
      const w: World = {
        service: service({ ports: PORTS, dual: seed % 2 === 0 }),
        pods: Array.from({ length: 150 + seed * 10 }, (_, i) => pod(i, r, 0)),
        nodes: nodeMap(['a', 'b', 'c', 'd']),
        slices: [],
        max: [5, 13, 50][seed % 3] ?? 50,
      };
      const history: Pod[][] = [];
      const seen = new Set<string>();
      checkSync(w, `seed ${seed} start`);
      for (let step = 0; step < 44; step++) {
        // Even steps go round every kind (so each seed covers them all), odd steps pick at random.
        const s = (step % 2 === 0 ? steps[(step / 2 + seed) % steps.length] : steps[Math.floor(r() * steps.length)]) as (typeof steps)[number];
        seen.add(s.name);
        if (s.name === 'back to an older pod list') w.pods = history[Math.floor(r() * history.length)] ?? w.pods;
        else s.run(w, r, step);
        checkSync(w, `seed ${seed} step ${step}: ${s.name}`);
        history.push(w.pods);
      }
      expect(seen.size).toBe(steps.length);
    });
  }
});
