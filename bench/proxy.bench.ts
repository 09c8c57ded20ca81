// Proxy section: 10k ClusterIP services x 5 endpoints seen by one agent in zone-a (half the
// services PreferClose, so their zone view is filtered). Pure: model and render times, and the
// bytes an agent receives for one endpoint change (its zone's view entries) next to what an
// unscoped kube-proxy receives (the whole slice). Kernel (root only, throwaway namespaces):
// full and partial syncs through the agent's backends next to applying the very same script
// directly with `iptables-restore --noflush < file` / `nft -f file` (the kernel's floor).
// Memory: a running startProxyAgent (dry-run) fed the 10k services from an in-memory bucket.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { DpServicePort, DpState, IptablesRenderResult } from '@slicemesh/dataplane';
import { renderIptables, renderIptablesFull, renderIptablesJumps, renderNftablesFull, renderNftablesUpdate } from '@slicemesh/dataplane';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import type { KvChange } from '@slicemesh/nats';
import { svcKey, viewKey } from '@slicemesh/nats';
import type { Exec } from '@slicemesh/netfilter';
import { IptablesRestorer, NftApplier, netnsExec, spawnExec } from '@slicemesh/netfilter';
import type { Backend, KvChangeSource, NodeSettings } from '@slicemesh/proxy-agent';
import { IptablesBackend, NftablesBackend, dpStateOf, parseProxyAgentConfig, selfNode, servicePortsFor, startProxyAgent } from '@slicemesh/proxy-agent';
import type { ZoneViews } from '@slicemesh/proxy-state';
import { diffZoneViews, viewSlicesForNode, zoneViews } from '@slicemesh/proxy-state';
import { createLogger, realClock } from '@slicemesh/runtime';
import { hintCluster } from '@slicemesh/core';
import { makeBenchSlice } from './cluster-gen.ts';
import { fmtBytes, fmtMs, median as medianOf, printTable, sampleMemory, time } from './harness.ts';

type Row = [string, string, string?];
const NS = 'bench';
const CLUSTER = 'bench';
const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const NODES: Node[] = Array.from({ length: 30 }, (_, i) => ({
  kind: 'Node',
  metadata: { name: `node-${i}`, labels: { [LABEL_ZONE]: ZONES[i % 3] ?? 'zone-a' } },
  status: { allocatable: { cpu: '8' }, conditions: [{ type: 'Ready', status: 'True' }] },
}));
const SETTINGS: NodeSettings = { nodeName: 'node-0', zone: 'zone-a', family: 'IPv4', nodeIPs: [], podCIDR: '10.128.0.0/9', masqueradeAll: false, masqueradeBit: 14 };
const NODE = selfNode(SETTINGS);
const ENDPOINTS = 5;
const PARTIAL_RUNS = 5;

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function service(i: number): Service {
  return {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: { name: `svc-${i}`, namespace: NS, uid: `uid-svc-${i}` },
    spec: {
      type: 'ClusterIP',
      selector: { app: `svc-${i}` },
      clusterIP: `10.96.${(i + 10) >> 8}.${(i + 10) & 255}`,
      clusterIPs: [`10.96.${(i + 10) >> 8}.${(i + 10) & 255}`],
      ipFamilies: ['IPv4'],
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      ...(i % 2 === 0 ? { trafficDistribution: 'PreferClose' } : {}),
    },
  };
}

// Every bench node has a zone label, so each endpoint carries its node's zone.
function slice(i: number, ready: (e: number) => boolean = () => true): EndpointSlice {
  return makeBenchSlice(i, Array.from({ length: ENDPOINTS }, (_, e) => ({ node: NODES[(i + e) % NODES.length] ?? NODES[0]!, ready: ready(e) })), NS);
}

/** One service's hinted slices and views (what the hints service computes per reconcile). */
function serviceViews(svc: Service, s: EndpointSlice): ZoneViews {
  return zoneViews({ services: [svc], slices: hintCluster({ nodes: NODES, slices: [s], services: [svc] }).slices, nodes: NODES });
}

/** The agent's ports for one service from its zone-a view. */
function portsOf(svc: Service, views: ZoneViews): DpServicePort[] {
  return servicePortsFor(svc, viewSlicesForNode(views, NODE), NODE, SETTINGS);
}

interface World {
  readonly services: Service[];
  readonly views: ZoneViews[];
  readonly ports: DpServicePort[][];
}

export function buildWorld(count: number): World {
  const services = Array.from({ length: count }, (_, i) => service(i));
  const views = services.map((svc, i) => serviceViews(svc, slice(i)));
  return { services, views, ports: services.map((svc, i) => portsOf(svc, views[i]!)) };
}

export const stateOf = (ports: readonly DpServicePort[][]): DpState => dpStateOf(ports.flat(), SETTINGS);

/** The zone-a endpoint of service i turns unready: its new views, ports, and the view ops. */
function change(world: World, i: number): { ports: DpServicePort[][]; views: ZoneViews; bytesZoneA: number; opsAll: number; slice: EndpointSlice } {
  const svc = world.services[i]!;
  const zoneAIndex = Array.from({ length: ENDPOINTS }, (_, e) => e).find((e) => (NODES[(i + e) % NODES.length]?.metadata.labels?.[LABEL_ZONE] ?? '') === 'zone-a') ?? 0;
  const changed = slice(i, (e) => e !== zoneAIndex);
  const views = serviceViews(svc, changed);
  const ops = diffZoneViews(world.views[i]!, views);
  const bytesZoneA = ops.filter((o) => (o.op === 'put' ? o.entry.zone : o.zone) === 'zone-a').reduce((n, o) => n + (o.op === 'put' ? bytes(o.entry.slice) + o.key.length : o.key.length), 0);
  const ports = world.ports.slice();
  ports[i] = portsOf(svc, views);
  return { ports, views, bytesZoneA, opsAll: ops.length, slice: changed };
}

function sh(cmd: string): { ms: number; ok: boolean; err: string } {
  const t = performance.now();
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
  return { ms: performance.now() - t, ok: r.status === 0, err: (r.stderr || '').split('\n')[0] ?? '' };
}

function kernelUnavailable(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not root';
  const probe = `smbp${process.pid}`;
  if (spawnSync('ip', ['netns', 'add', probe]).status !== 0) return '`ip netns add` fails';
  spawnSync('ip', ['netns', 'delete', probe]);
  const missing = ['iptables-restore', 'nft'].filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
  return missing.length > 0 ? `missing ${missing.join(', ')}` : null;
}

/** The ratios of agent to kernel floor measured in one run (the `--json` keys). */
export interface ProxyRatios {
  iptables_full_ratio?: number;
  nft_partial_ratio?: number;
  iptables_restart_ms?: number;
  nft_restart_ms?: number;
}

/** Full and partial syncs through `backend` in one namespace; the same scripts applied directly in another. */
async function kernelRuns(kind: 'iptables' | 'nftables', world: World, dir: string, rows: Row[], ratios: ProxyRatios): Promise<void> {
  const id = `smb${kind[0]}${process.pid}`;
  const [agentNs, directNs] = [`${id}a`, `${id}d`];
  const removeAll = (): void => {
    for (const ns of [agentNs, directNs]) spawnSync('ip', ['netns', 'delete', ns], { stdio: 'ignore' });
  };
  process.once('exit', removeAll); // a crash or Ctrl-C must not leave namespaces behind
  for (const ns of [agentNs, directNs]) {
    spawnSync('ip', ['netns', 'add', ns]);
    spawnSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  }
  const progress = (what: string) => process.stderr.write(`proxy bench: ${kind} ${what}\n`);
  try {
    progress(`full sync of ${world.services.length} services`);
    const exec = netnsExec(spawnExec({ timeoutMs: 600_000 }), agentNs);
    const backend: Backend =
      kind === 'iptables'
        ? new IptablesBackend({ restorer: new IptablesRestorer({ exec }), clock: realClock, jumpCheckIntervalMs: 30_000 })
        : new NftablesBackend({ nft: new NftApplier({ exec }) });
    const tool = kind === 'iptables' ? 'iptables-restore --noflush <' : 'nft -f';
    let state = stateOf(world.ports);
    let t = performance.now();
    await backend.sync({ state, changedServices: null });
    const agentFull = performance.now() - t;
    const file = join(dir, `${kind}-full`);
    writeFileSync(file, kind === 'iptables' ? renderIptablesFull(state) : renderNftablesFull(state));
    if (kind === 'iptables') {
      // The floor: the same rules without --noflush (which flushes whole tables: fine in a
      // throwaway namespace, not on a shared node). On a shared machine one run can be
      // disturbed, so agent and floor run twice, alternating, and the faster of each counts.
      const direct = sh(`ip netns exec ${directNs} iptables-restore < ${file}`);
      const [agentNs2, directNs2] = [`${id}a2`, `${id}d2`];
      for (const ns of [agentNs2, directNs2]) spawnSync('ip', ['netns', 'add', ns]);
      t = performance.now();
      await new IptablesBackend({ restorer: new IptablesRestorer({ exec: netnsExec(spawnExec({ timeoutMs: 600_000 }), agentNs2) }), clock: realClock, jumpCheckIntervalMs: 30_000 }).sync({ state, changedServices: null });
      const agentFull2 = performance.now() - t;
      const direct2 = sh(`ip netns exec ${directNs2} iptables-restore < ${file}`);
      for (const ns of [agentNs2, directNs2]) spawnSync('ip', ['netns', 'delete', ns]);
      const floor = Math.min(...[direct, direct2].filter((d) => d.ok).map((d) => d.ms));
      rows.push(['iptables: full sync into an empty table, agent backend', fmtMs(Math.min(agentFull, agentFull2)), `faster of 2 (${fmtMs(agentFull)}, ${fmtMs(agentFull2)}); iptables-save, render, iptables-restore --noflush (-S first), jumps inserted`]);
      rows.push(['iptables: same ruleset, `iptables-restore < file` (flushing)', direct.ok ? fmtMs(floor) : 'FAILED', direct.ok ? `faster of 2 (${fmtMs(direct.ms)}, ${fmtMs(direct2.ms)}); the kernel's floor` : direct.err]);
      if (direct.ok) {
        ratios.iptables_full_ratio = Math.min(agentFull, agentFull2) / floor;
        rows.push(['iptables_full_ratio (agent full sync / floor)', ratios.iptables_full_ratio.toFixed(2), 'target <= 2']);
      }
      const restorer = new IptablesRestorer({ exec });
      t = performance.now();
      await restorer.ensureJumps(renderIptablesJumps());
      rows.push(['iptables: checking the built-in jumps (all present)', fmtMs(performance.now() - t), '6 `iptables -S CHAIN` listings (built-in chains); a partial sync repeats them every SYNC_PERIOD']);
      // A restarted agent on the programmed node: its first sync is full, reads the node and
      // writes only what differs (here nothing).
      progress('restarted agent');
      t = performance.now();
      const restart = await new IptablesBackend({ restorer: new IptablesRestorer({ exec }), clock: realClock, jumpCheckIntervalMs: 30_000 }).sync({ state, changedServices: null });
      const restartMs = performance.now() - t;
      ratios.iptables_restart_ms = restartMs;
      rows.push(['iptables: restarted agent, first sync on the programmed node', fmtMs(restartMs), `target <= 5 s; iptables-save, render, compare; ${String(restart.detail?.rewrittenChains)} chains written`]);
      // Why the agent sends `-S` first: --noflush alone grows with the square of the chains
      // (iptables-nft keeps the chains a restore names in a sorted list).
      for (const n of [world.services.length / 10, world.services.length / 5]) {
        const small = join(dir, `iptables-${n}`);
        // Without the built-in jumps: after -S, iptables-nft cannot insert into a built-in
        // chain a fresh namespace does not have yet.
        const text = renderIptables(stateOf(world.ports.slice(0, n))).script;
        writeFileSync(small, text);
        writeFileSync(`${small}-S`, text.replaceAll(/^(\*(?:filter|nat))$/gm, '$1\n-S'));
        for (const [variant, path] of [['', small], [' with -S first', `${small}-S`]] as const) {
          const ns = `${id}s${n}`;
          spawnSync('ip', ['netns', 'add', ns]);
          const r = sh(`ip netns exec ${ns} iptables-restore --noflush < ${path} > /dev/null`);
          spawnSync('ip', ['netns', 'delete', ns]);
          rows.push([`  \`iptables-restore --noflush < file\`${variant}, ${n} services, empty table`, r.ok ? fmtMs(r.ms) : 'FAILED', r.ok ? 'direct, for the growth with size' : r.err]);
        }
      }
    } else {
      const direct = sh(`ip netns exec ${directNs} nft -f ${file}`);
      rows.push(['nftables: full sync into an empty table, agent backend', fmtMs(agentFull), 'render, nft -f']);
      rows.push(['nftables: same ruleset, `nft -f file` directly', direct.ok ? fmtMs(direct.ms) : 'FAILED', direct.ok ? "the kernel's floor" : direct.err]);
    }
    sampleMemory();

    progress('partial syncs');
    // Partial syncs: one endpoint of one service turns unready, five times (five services).
    let previous: IptablesRenderResult = renderIptables(state);
    let ports = world.ports;
    const agentTimes: number[] = [];
    const directTimes: number[] = [];
    const lines: number[] = [];
    for (let k = 0; k < PARTIAL_RUNS; k++) {
      const i = Math.floor(world.services.length / 2) + 2 * k;
      const c = change({ ...world, ports }, i);
      const next = stateOf(c.ports);
      const changed = new Set([`${NS}/svc-${i}`]);
      t = performance.now();
      const r = await backend.sync({ state: next, changedServices: changed });
      agentTimes.push(performance.now() - t);
      if (r.mode !== 'partial') throw new Error(`${kind}: expected a partial sync, got ${r.mode}`);
      let script: string;
      if (kind === 'iptables') {
        const p = renderIptables(next, { previous, changedServicePorts: changed });
        previous = p;
        script = p.script;
      } else {
        script = renderNftablesUpdate(state, next).script;
      }
      lines.push(script.split('\n').length);
      const pf = join(dir, `${kind}-partial-${k}`);
      writeFileSync(pf, script);
      const d = sh(`ip netns exec ${directNs} ${tool} ${pf}`);
      if (d.ok) directTimes.push(d.ms);
      state = next;
      ports = c.ports;
    }
    rows.push([`${kind}: partial sync of one endpoint change, agent backend`, fmtMs(median(agentTimes)), `median of ${PARTIAL_RUNS}; ${median(lines)} script lines`]);
    rows.push([`${kind}: same partial script applied directly`, directTimes.length ? fmtMs(median(directTimes)) : 'FAILED', `median of ${directTimes.length}`]);
    if (kind === 'nftables' && directTimes.length > 0) {
      ratios.nft_partial_ratio = median(agentTimes) / median(directTimes);
      rows.push(['nft_partial_ratio (agent partial sync / same change applied directly)', ratios.nft_partial_ratio.toFixed(2), 'target <= 1.5']);
    }
    if (kind === 'nftables') await nftRestarts(exec, { ...world, ports }, dir, rows, ratios, progress);
  } finally {
    removeAll();
    process.off('exit', removeAll);
  }
}

/**
 * A restarted nftables agent on the programmed node: an agent with a state file programs the
 * node, then a new one starts with the same file, once with the same services and once with
 * one service changed while it was down. Timed from the first sync's start to its end.
 */
async function nftRestarts(exec: Exec, world: World, dir: string, rows: Row[], ratios: ProxyRatios, progress: (what: string) => void): Promise<void> {
  progress('restarted agents');
  const file = join(dir, 'nftables-state.json');
  const stateStore = { load: async () => (existsSync(file) ? readFileSync(file, 'utf8') : null), save: async (text: string) => writeFileSync(file, text) };
  const agent = () => new NftablesBackend({ nft: new NftApplier({ exec }), stateStore, clock: realClock, saveIntervalMs: 0 });
  const state = stateOf(world.ports);
  rmSync(file, { force: true });
  await agent().sync({ state, changedServices: null });
  for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  let t = performance.now();
  const same = await agent().sync({ state, changedServices: null });
  const sameMs = performance.now() - t;
  ratios.nft_restart_ms = sameMs;
  rows.push(['nftables: restarted agent, first sync on the programmed node', fmtMs(sameMs), `target <= 5 s; state file read, generation checked, everything compared; ${same.mode}${same.detail?.restored === true ? ', rules kept' : ', REBUILT'}`]);
  const c = change(world, Math.floor(world.services.length / 3));
  t = performance.now();
  const changed = await agent().sync({ state: stateOf(c.ports), changedServices: null });
  rows.push(['nftables: restarted agent, one service changed while it was down', fmtMs(performance.now() - t), `${changed.mode}${changed.detail?.restored === true ? ', rules kept' : ', REBUILT'}; ${String(changed.detail?.scriptLines)} script lines`]);
}

/** A bucket in memory: values kept as JSON text and parsed when yielded, as kvWatchJson does. */
function memorySource(entries: ReadonlyMap<string, string>): KvChangeSource {
  return {
    async *watch(filter, opts) {
      const prefix = filter.endsWith('>') ? filter.slice(0, -1) : filter;
      let revision = 0;
      for (const [key, text] of entries) {
        if (key.startsWith(prefix)) yield { key, op: 'PUT', value: JSON.parse(text) as unknown, revision: ++revision } satisfies KvChange;
      }
      opts.onInitialDone();
      await new Promise<void>((resolve) => opts.signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

async function agentMemory(world: World, rows: Row[]): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const svc = new Map<string, string>();
  const views = new Map<string, string>();
  world.services.forEach((s, i) => {
    svc.set(svcKey({ cluster: CLUSTER, namespace: NS, name: s.metadata.name }), JSON.stringify(s));
    for (const e of world.views[i]!.entries.values()) {
      views.set(viewKey({ cluster: CLUSTER, zone: e.zone, namespace: e.namespace, service: e.service, slice: e.sliceName }), JSON.stringify(e.slice));
    }
  });
  let zoneBytes = 0;
  for (const [k, v] of views) if (k.startsWith(`${CLUSTER}.zone-a.`)) zoneBytes += k.length + v.length;
  let svcBytes = 0;
  for (const [k, v] of svc) svcBytes += k.length + v.length;
  gc();
  const before = process.memoryUsage();
  const config = parseProxyAgentConfig([], { NODE_NAME: SETTINGS.nodeName, NODE_ZONE: SETTINGS.zone, CLUSTER, BACKEND: 'dry-run', POD_CIDR: SETTINGS.podCIDR ?? '', MIN_SYNC_PERIOD: '0s' });
  let written = 0;
  const t = performance.now();
  const agent = startProxyAgent(config, {
    sources: { services: memorySource(svc), views: memorySource(views) },
    log: createLogger({ service: 'proxy-agent', level: 'silent' }),
    writeFile: async (_path, text) => void (written = text.length),
  });
  await agent.ready;
  const readyMs = performance.now() - t;
  gc();
  const after = process.memoryUsage();
  sampleMemory();
  await agent.close();
  rows.push([
    `agent (dry-run, iptables format) on ${world.services.length} services: heap retained`,
    fmtBytes(after.heapUsed - before.heapUsed),
    `rss ${fmtBytes(after.rss)} (whole bench process); first sync ${fmtMs(readyMs)}; received ${fmtBytes(svcBytes)} specs + ${fmtBytes(zoneBytes)} zone-a views; ruleset ${fmtBytes(written)}`,
  ]);
}

export async function runProxyBench(opts: { quick: boolean }): Promise<ProxyRatios> {
  const count = opts.quick ? 1000 : 10_000;
  const rows: Row[] = [];
  const ratios: ProxyRatios = {};
  const build = time(() => buildWorld(count));
  const world = build.value;
  rows.push([`${count / 1000}k services x ${ENDPOINTS} endpoints: hints + zone views + agent model`, fmtMs(build.ms), 'inputs for everything below']);
  const model = time(() => world.services.map((s, i) => portsOf(s, world.views[i]!)));
  const state = stateOf(model.value);
  rows.push(['agent model (proxyModel per service, zone-a view)', fmtMs(model.ms), `${state.servicePorts.length} service ports`]);
  const ipt = time(() => renderIptables(state));
  rows.push(['render iptables, full (one run)', fmtMs(ipt.ms), `${ipt.value.script.split('\n').length} lines, ${fmtBytes(ipt.value.script.length)}`]);
  const nft = time(() => renderNftablesFull(state));
  rows.push(['render nftables, full (one run)', fmtMs(nft.ms), `${nft.value.split('\n').length} lines, ${fmtBytes(nft.value.length)}`]);
  sampleMemory();

  // One endpoint change (a PreferClose service's zone-a endpoint turns unready).
  const i = Math.floor(count / 2);
  const c = change(world, i);
  const next = stateOf(c.ports);
  const changed = new Set([`${NS}/svc-${i}`]);
  const part = medianOf(5, () => renderIptables(next, { previous: ipt.value, changedServicePorts: changed }));
  rows.push(['render iptables, partial (one service)', fmtMs(part.ms), `median of 5; ${part.value.script.split('\n').length} lines (dispatch chains rendered and digested in full)`]);
  const upd = medianOf(5, () => renderNftablesUpdate(state, next));
  rows.push(['render nftables, update (one endpoint), both tables compared', fmtMs(upd.ms), `median of 5; ${upd.value.script.split('\n').length - 1} lines`]);
  const updPartial = medianOf(5, () => renderNftablesUpdate(state, next, { changedServicePorts: changed }));
  rows.push(['render nftables, update (one endpoint), changed service only', fmtMs(updPartial.ms), `median of 5; ${updPartial.value.script.split('\n').length - 1} lines (what the agent renders)`]);
  const plain = change(world, i + 1); // a service without PreferClose: every zone's view changes
  rows.push(['bytes received for one endpoint change, zone-a agent, PreferClose service', fmtBytes(c.bytesZoneA), `${c.opsAll} view op(s) across all zones`]);
  rows.push(['  same, service without topology (unfiltered views)', fmtBytes(plain.bytesZoneA), `${plain.opsAll} view op(s) across all zones`]);
  rows.push(['  unscoped kube-proxy: the whole changed slice, to every node', fmtBytes(bytes(c.slice)), 'upstream EndpointSlice watch']);

  const skip = kernelUnavailable();
  if (skip !== null) {
    rows.push(['kernel applies', 'skipped', `${skip}: full and partial syncs need root, ip netns, iptables-restore and nft`]);
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'slicemesh-bench-'));
    try {
      await kernelRuns('iptables', world, dir, rows, ratios);
      await kernelRuns('nftables', world, dir, rows, ratios);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await agentMemory(world, rows);
  printTable(`proxy (${count / 1000}k ClusterIP services x ${ENDPOINTS} endpoints, one agent in zone-a of 3)`, rows);
  return ratios;
}
