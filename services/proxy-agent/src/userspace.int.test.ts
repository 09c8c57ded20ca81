// The userspace backend (D.10) on the real kernel: the proxy engine runs inside the node's namespace
// (NetnsUserspaceProxier), iptables REDIRECTs the ClusterIP and the NodePort to its sockets,
// and an outside client (routed to the service range through the node) connects for real.
// Two live pods alternate; a dead endpoint (a pod port nobody listens on) is skipped without
// the client seeing an error, and one whose SYNs are dropped is given up after the 2 s connect
// timeout; UDP requests get their replies back through the ClusterIP;
// ClientIP affinity keeps the client on one pod; a removed endpoint drains (its open connection
// keeps working while new ones go elsewhere). Skips with the reason when namespaces cannot
// be made.

import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { DpServicePort, DpState } from '@slicemesh/dataplane';
import { dpEndpoint, dpServicePort } from '@slicemesh/dataplane/testing';
import { IptablesRestorer, NetnsUserspaceProxier, netnsExec, spawnExec } from '@slicemesh/netfilter';
import { spawnNodeIn } from '@slicemesh/netfilter/testing/netns-lab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserspaceBackend } from './backends/userspace-backend.ts';
import { NetnsLab, POD_PORT, POD_RANGE, SERVICE_RANGE, labUnavailableReason } from './test-lab.ts';

const unavailable = labUnavailableReason();
const prefix = `smus${randomUUID().slice(0, 6)}`;
const WEB_IP = '10.96.0.30';
const DNS_IP = '10.96.0.53';
const NODE_PORT = 30080;
const UDP_PORT = 5353;
const DEAD_PORT = 8081;
const BLACKHOLE_PORT = 8082;

const UDP_SERVER = (name: string) =>
  `const s = require('dgram').createSocket('udp4'); s.on('message', (m, r) => s.send(${JSON.stringify(name)} + ':' + m, r.port, r.address)); s.bind(${UDP_PORT}, '0.0.0.0', () => console.log('listening'));`;

/** n requests, each from a fresh socket (a new client address); tallies the repliers. */
const UDP_CLIENT = `
const dgram = require('dgram');
const [host, port, n] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const one = (i) => new Promise((resolve) => {
  const c = dgram.createSocket('udp4');
  const t = setTimeout(() => { c.close(); resolve('TIMEOUT'); }, 1000);
  c.on('message', (m) => { clearTimeout(t); c.close(); resolve(String(m).split(':')[0] + (String(m).endsWith(':q' + i) ? '' : ':MISMATCH')); });
  c.send('q' + i, port, host);
});
(async () => { const out = {}; for (let i = 0; i < n; i++) { const r = await one(i); out[r] = (out[r] || 0) + 1; } console.log(JSON.stringify(out)); })();
`;

const ECHO_IP = '10.96.0.40';
const ECHO_PORT = 9090;
const ECHO_SERVER = `require('net').createServer((s) => { s.on('error', () => {}); s.pipe(s); }).listen(${ECHO_PORT}, '0.0.0.0', () => console.log('listening'));`;
/** One connection: sends "one", prints the echo, waits 1.5 s (the test removes the endpoint meanwhile), sends "two", prints the echo. */
const LONG_CLIENT = `
const s = require('net').connect({ host: process.argv[1], port: Number(process.argv[2]) });
const t = setTimeout(() => { console.log('TIMEOUT'); process.exit(1); }, 8000);
s.on('error', (e) => { console.log(e.code); process.exit(1); });
s.once('data', (d) => { console.log(String(d)); setTimeout(() => { s.write('two'); s.once('data', (d2) => { console.log(String(d2)); clearTimeout(t); s.end(); }); }, 1500); });
s.write('one');
`;

function run(ns: string, cmd: string, args: readonly string[]): string {
  const r = spawnSync('ip', ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${ns}: ${r.stderr.trim()}`);
  return r.stdout;
}

function output(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

describe(`userspace backend on the real kernel${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let lab: NetnsLab | undefined;
  let node = '';
  let proxies: NetnsUserspaceProxier | undefined;
  let backend: UserspaceBackend | undefined;
  const extraServers: ChildProcess[] = [];
  const need = (): { lab: NetnsLab; backend: UserspaceBackend } => {
    if (!lab || !backend) throw new Error('setup failed');
    return { lab, backend };
  };
  const ep = (ip: string, port = POD_PORT) => dpEndpoint(ip, { port, isLocal: true });
  const state = (ports: readonly DpServicePort[]): DpState => ({ family: 'IPv4', nodeIPs: [], primaryNodeIP: null, podCIDR: POD_RANGE, masqueradeAll: false, masqueradeBit: 13, servicePorts: ports });
  const pods = () => [need().lab.pod('n1-pod1'), need().lab.pod('n1-pod2')] as const;

  beforeAll(async () => {
    if (unavailable) return;
    lab = new NetnsLab(prefix, [{ name: 'n1', zone: 'zone-a', pods: 2 }]);
    await lab.startServers();
    node = lab.node('n1').ns;
    run(lab.client, 'ip', ['route', 'add', SERVICE_RANGE, 'via', lab.node('n1').ip]);
    for (const p of lab.pods) {
      const child = spawnNodeIn(p.ns, UDP_SERVER(p.name));
      extraServers.push(child);
      await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    }
    proxies = new NetnsUserspaceProxier({ netns: node });
    backend = new UserspaceBackend({ restorer: new IptablesRestorer({ exec: netnsExec(spawnExec(), node) }), proxies });
  });
  afterAll(async () => {
    await proxies?.close();
    for (const c of extraServers) c.kill();
    lab?.destroy();
  });

  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      await fn();
    });

  step('TCP through the ClusterIP and the NodePort alternates between the two pods', async () => {
    const [p1, p2] = pods();
    const res = await need().backend.sync({ state: state([dpServicePort('default/web:http', { clusterIP: WEB_IP, port: 80, nodePort: NODE_PORT, endpoints: [ep(p1.ip), ep(p2.ip)] })]), changedServices: null });
    expect(res.counts).toMatchObject({ proxies: 1, nat: 4 });
    expect(run(node, 'iptables-save', ['-t', 'nat'])).toMatch(/-A SLICEMESH-PORTALS-CONTAINER .*-d 10\.96\.0\.30\/32 -p tcp .*--dport 80 -j REDIRECT --to-ports \d+/);
    expect(await need().lab.connect(need().lab.client, WEB_IP, 80, 10)).toEqual({ [p1.name]: 5, [p2.name]: 5 });
    expect(await need().lab.connect(need().lab.client, need().lab.node('n1').ip, NODE_PORT, 4)).toEqual({ [p1.name]: 2, [p2.name]: 2 });
  });

  step('a dead endpoint is skipped: every connection succeeds, retried to the live pod', async () => {
    const [p1, p2] = pods();
    const before = await need().backend.stats();
    await need().backend.sync({ state: state([dpServicePort('default/web:http', { clusterIP: WEB_IP, port: 80, endpoints: [ep(p1.ip, DEAD_PORT), ep(p2.ip)] })]), changedServices: null });
    expect(await need().lab.connect(need().lab.client, WEB_IP, 80, 10)).toEqual({ [p2.name]: 10 });
    const after = await need().backend.stats();
    expect(after.retries - before.retries).toBe(5);
    expect(after.connectFailures - before.connectFailures).toBe(5);
    expect(after.exhausted).toBe(0);
  });

  step('an endpoint that never answers (its SYNs dropped) is given up after the connect timeout and the next one serves', async () => {
    const [p1, p2] = pods();
    const drop = ['-w', '-t', 'filter', '-I', 'OUTPUT', '-d', `${p1.ip}/32`, '-p', 'tcp', '--dport', String(BLACKHOLE_PORT), '-j', 'DROP'];
    run(node, 'iptables', drop);
    try {
      const before = await need().backend.stats();
      await need().backend.sync({ state: state([dpServicePort('default/web:http', { clusterIP: WEB_IP, port: 80, endpoints: [ep(p1.ip, BLACKHOLE_PORT), ep(p2.ip)] })]), changedServices: null });
      const t0 = Date.now();
      expect(await need().lab.connect(need().lab.client, WEB_IP, 80, 4, 6000)).toEqual({ [p2.name]: 4 });
      const after = await need().backend.stats();
      expect(after.retries - before.retries).toBe(2);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2 * 1900); // two attempts waited out the 2 s connect timeout
    } finally {
      run(node, 'iptables', drop.map((a) => (a === '-I' ? '-D' : a)));
    }
  });

  step('UDP requests through the ClusterIP get their replies, round-robin per client socket', async () => {
    const [p1, p2] = pods();
    await need().backend.sync({
      state: state([dpServicePort('default/dns:dns', { protocol: 'UDP', clusterIP: DNS_IP, port: 53, endpoints: [ep(p1.ip, UDP_PORT), ep(p2.ip, UDP_PORT)] })]),
      changedServices: null,
    });
    const tally = JSON.parse(await output(spawnNodeIn(need().lab.client, UDP_CLIENT, [DNS_IP, '53', '10']))) as Record<string, number>;
    expect(tally).toEqual({ [p1.name]: 5, [p2.name]: 5 });
  });

  step('ClientIP affinity keeps the client on one pod', async () => {
    const [p1, p2] = pods();
    await need().backend.sync({ state: state([dpServicePort('default/web:http', { clusterIP: WEB_IP, port: 80, sessionAffinityTimeoutSeconds: 60, endpoints: [ep(p1.ip), ep(p2.ip)] })]), changedServices: null });
    const tally = await need().lab.connect(need().lab.client, WEB_IP, 80, 10);
    expect(Object.values(tally)).toEqual([10]);
    expect([p1.name, p2.name]).toContain(Object.keys(tally)[0]);
  });

  step('an endpoint removed drains: its established connection keeps working, new ones go to the other pod', async () => {
    const [p1, p2] = pods();
    const echo = spawnNodeIn(p1.ns, ECHO_SERVER);
    extraServers.push(echo);
    await new Promise<void>((resolve) => echo.stdout?.once('data', () => resolve()));
    const at = (...eps: ReturnType<typeof ep>[]) => state([dpServicePort('default/echo:e', { clusterIP: ECHO_IP, port: 80, endpoints: eps })]);
    await need().backend.sync({ state: at(ep(p1.ip, ECHO_PORT)), changedServices: null });
    const client = spawnNodeIn(need().lab.client, LONG_CLIENT, [ECHO_IP, '80']);
    const lines: string[] = [];
    const firstEcho = new Promise<void>((resolve) => client.stdout?.on('data', (d: Buffer) => { lines.push(...d.toString().trim().split('\n')); resolve(); }));
    const done = output(client).catch((e: unknown) => String(e));
    await firstEcho;
    expect(lines[0]).toBe('one');
    // p1 leaves the service; p2's name server takes its place for new connections.
    await need().backend.sync({ state: state([dpServicePort('default/echo:e', { clusterIP: ECHO_IP, port: 80, endpoints: [ep(p2.ip)] })]), changedServices: null });
    expect(await need().lab.connect(need().lab.client, ECHO_IP, 80, 3)).toEqual({ [p2.name]: 3 });
    await done;
    expect(lines).toEqual(['one', 'two']);
  });

  step('a service removed: its rules and proxy go, the ClusterIP no longer answers', async () => {
    const res = await need().backend.sync({ state: state([]), changedServices: null });
    expect(res.counts).toMatchObject({ proxies: 0, nat: 0 });
    expect(run(node, 'iptables-save', ['-t', 'nat'])).not.toContain('REDIRECT');
    const tally = await need().lab.connect(need().lab.client, WEB_IP, 80, 1, 500);
    expect(tally['n1-pod1'] ?? 0).toBe(0);
  });
});
