// Building blocks for real-kernel test labs made of network namespaces (never used by
// production code): run `ip`, create namespaces and veth links that are torn down again,
// serve a pod's name over TCP inside its namespace, and the connect snippet clients run.
// Each lab keeps its own topology (names, addresses, how clients are driven):
// services/proxy-agent/src/test-lab.ts and test/pipeline/netns-cluster.ts.

import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';

/** Connection outcomes by reply: a pod's name, or TIMEOUT, ECONNREFUSED, EMPTY, ... */
export type Tally = Readonly<Record<string, number>>;

/** A node to build: its name, its zone and how many pods it runs. */
export interface LabNodeSpec {
  readonly name: string;
  readonly zone: string;
  readonly pods: number;
}

export interface LabNode {
  readonly name: string;
  readonly zone: string;
  /** Network namespace name. */
  readonly ns: string;
  /** Address on the fabric: the node's InternalIP, where NodePorts are reached. */
  readonly ip: string;
}

export interface LabPod<N extends LabNode = LabNode> {
  readonly name: string;
  readonly ns: string;
  readonly ip: string;
  readonly node: N;
}

/** Runs `ip <args>`; throws with the tool's message when it fails. */
export function ip(args: readonly string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim() || r.error?.message || `exit ${r.status}`}`);
}

/**
 * Starts `node -e script ...args` inside namespace `ns`, stdout and stderr piped. `ip netns
 * exec` execs the program in place, so the child's pid is node's own.
 */
export function spawnNodeIn(ns: string, script: string, args: readonly string[] = [], stdin: 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  return spawn('ip', ['netns', 'exec', ns, 'node', '-e', script, ...args], { stdio: [stdin, 'pipe', 'pipe'] });
}

/**
 * Script text (CommonJS, for `node -e`) that defines `net` and `once(host, port, timeoutMs)`:
 * one TCP connection, resolving to the reply text, or EMPTY, TIMEOUT or the error code.
 */
export const CONNECT_ONCE_JS = `
const net = require('net');
const once = (host, port, timeoutMs) => new Promise((resolve) => {
  const s = net.connect({ host, port });
  let data = '';
  const timer = setTimeout(() => { s.destroy(); resolve('TIMEOUT'); }, timeoutMs);
  s.on('data', (d) => (data += d));
  s.on('end', () => { clearTimeout(timer); resolve(data || 'EMPTY'); });
  s.on('error', (e) => { clearTimeout(timer); resolve(e.code || 'ERROR'); });
});
`;

/** Script text for `node -e`: a TCP server on `host`:`port` answering every connection with `name`; prints a line once listening. */
export function nameServerJs(name: string, port: number, host = '0.0.0.0'): string {
  return (
    `require('net').createServer((s) => { s.on('error', () => {}); s.end(${JSON.stringify(name)}); })` +
    `.listen(${port}, '${host}', () => console.log('listening'))`
  );
}

/** Script text for `node -e host port n timeoutMs`: n connections one after another, printing the replies tallied as JSON. */
const TALLY_CLIENT_JS = `${CONNECT_ONCE_JS}
const [host, port, n, timeout] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4])];
(async () => { const out = {}; for (let i = 0; i < n; i++) { const r = await once(host, port, timeout); out[r] = (out[r] || 0) + 1; } console.log(JSON.stringify(out)); })();
`;

/** `n` connections one after another from namespace `from` to host:port, tallied by reply (EMPTY, TIMEOUT, an error code or the text). */
export function connectTally(from: string, host: string, port: number, n = 20, timeoutMs = 1000): Promise<Tally> {
  return new Promise((resolve, reject) => {
    const child = spawnNodeIn(from, TALLY_CLIENT_JS, [host, String(port), String(n), String(timeoutMs)]);
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`client in ${from} exited ${code}: ${err}`));
      else resolve(JSON.parse(out) as Tally);
    });
  });
}

/** The item called `name`; throws `no <kind> <name>` when there is none. */
export function byName<T extends { readonly name: string }>(items: readonly T[], name: string, kind: string): T {
  const found = items.find((x) => x.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name}`);
  return found;
}

/** The namespaces and server processes one lab created, so that `destroy` removes exactly those. */
export class NetnsResources {
  readonly #namespaces: string[] = [];
  readonly #servers: ChildProcess[] = [];

  /** Creates namespace `ns` with loopback up. */
  add(ns: string): void {
    ip(['netns', 'add', ns]);
    this.#namespaces.push(ns);
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
  }

  /**
   * Creates the fabric `<prefix>-fab` (a namespace holding bridge `br0`, up) and the outside
   * client `<prefix>-cli` plugged into it at `clientAddr` through port `clientPort`.
   */
  addFabric(prefix: string, clientPort: string, clientAddr: string): { readonly fabric: string; readonly client: string } {
    const fabric = `${prefix}-fab`;
    const client = `${prefix}-cli`;
    this.add(fabric);
    ip(['-n', fabric, 'link', 'add', 'br0', 'type', 'bridge']);
    ip(['-n', fabric, 'link', 'set', 'br0', 'up']);
    this.plug(client, clientPort, fabric, clientAddr);
    return { fabric, client };
  }

  /** Creates `ns` with `fab0` at `addr`/24, its veth peer `port` on `br0` in namespace `fabric`. */
  plug(ns: string, port: string, fabric: string, addr: string): void {
    this.add(ns);
    ip(['-n', ns, 'link', 'add', 'fab0', 'type', 'veth', 'peer', 'name', port, 'netns', fabric]);
    ip(['-n', fabric, 'link', 'set', port, 'master', 'br0']);
    ip(['-n', fabric, 'link', 'set', port, 'up']);
    ip(['-n', ns, 'addr', 'add', `${addr}/24`, 'dev', 'fab0']);
    ip(['-n', ns, 'link', 'set', 'fab0', 'up']);
  }

  /**
   * Creates pod namespace `podNs` on a veth pair to `nodeNs` (`hostIf` on the node, `eth0` in
   * the pod): the pod has `podIp`/32 and a default route via `gateway`, which the node holds
   * as a /32 on `hostIf` next to its route to `podIp`.
   */
  addPod(nodeNs: string, hostIf: string, podNs: string, podIp: string, gateway: string): void {
    this.add(podNs);
    ip(['-n', nodeNs, 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', podNs]);
    ip(['-n', nodeNs, 'addr', 'add', `${gateway}/32`, 'dev', hostIf]);
    ip(['-n', nodeNs, 'link', 'set', hostIf, 'up']);
    ip(['-n', nodeNs, 'route', 'add', `${podIp}/32`, 'dev', hostIf]);
    ip(['-n', podNs, 'addr', 'add', `${podIp}/32`, 'dev', 'eth0']);
    ip(['-n', podNs, 'link', 'set', 'eth0', 'up']);
    ip(['-n', podNs, 'route', 'add', gateway, 'dev', 'eth0']);
    ip(['-n', podNs, 'route', 'add', 'default', 'via', gateway, 'dev', 'eth0']);
  }

  /** Starts a `nameServerJs` server in every pod's namespace; resolves once all listen, rejects if one exits first. */
  async startServers(pods: readonly { readonly name: string; readonly ns: string }[], port: number): Promise<void> {
    await Promise.all(
      pods.map(
        (pod) =>
          new Promise<void>((resolve, reject) => {
            const child = spawnNodeIn(pod.ns, nameServerJs(pod.name, port));
            this.#servers.push(child);
            let err = '';
            child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
            child.stdout?.once('data', () => resolve());
            child.once('exit', (code) => reject(new Error(`server in ${pod.ns} exited ${code}: ${err}`)));
          }),
      ),
    );
  }

  /** Kills the servers still running (by pid) and deletes the namespaces, newest first. Safe to call again. */
  destroy(): void {
    for (const s of this.#servers) if (s.exitCode === null && s.pid !== undefined) s.kill('SIGKILL');
    for (const ns of this.#namespaces.splice(0).reverse()) spawnSync('ip', ['netns', 'delete', ns]);
  }
}

/** What a lab's topology-specific builder made: the outside client's namespace, the nodes and the pods. */
export interface LabParts<N, P> {
  readonly client: string;
  readonly nodes: N[];
  readonly pods: P[];
}

/**
 * The part every namespace lab shares; a lab extends it and passes the builder of its own
 * topology. Finds nodes and pods by name, runs a `nameServerJs` server in every pod, and
 * tears down everything it created.
 */
export class NetnsLabBase<N extends { readonly name: string }, P extends { readonly name: string; readonly ns: string }> {
  /** The outside client's namespace. */
  readonly client: string;
  readonly nodes: readonly N[];
  readonly pods: readonly P[];
  readonly #made = new NetnsResources();
  readonly #serverPort: number;

  /** Runs `build`; if it throws, deletes whatever it made so far and rethrows. */
  constructor(build: (made: NetnsResources) => LabParts<N, P>, serverPort: number) {
    let parts: LabParts<N, P>;
    try {
      parts = build(this.#made);
    } catch (e) {
      this.#made.destroy(); // not this.destroy(): a subclass's fields do not exist yet
      throw e;
    }
    this.client = parts.client;
    this.nodes = parts.nodes;
    this.pods = parts.pods;
    this.#serverPort = serverPort;
  }

  node(name: string): N {
    return byName(this.nodes, name, 'node');
  }

  pod(name: string): P {
    return byName(this.pods, name, 'pod');
  }

  /** Starts every pod's server; resolves once all listen. */
  startServers(): Promise<void> {
    return this.#made.startServers(this.pods, this.#serverPort);
  }

  /** Stops the servers (by their process ids) and deletes every namespace the lab created. */
  destroy(): void {
    this.#made.destroy();
  }
}

/** Why `ip netns add` fails here (the tool's message), or null when it works; the probe namespace is deleted again. */
export function netnsAddFailure(): string | null {
  const probe = `smprobe-${process.pid}`;
  const r = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (r.status !== 0) return r.stderr.trim() || r.error?.message || `exit ${r.status}`;
  spawnSync('ip', ['netns', 'delete', probe]);
  return null;
}

/** Those of `tools` not found on PATH, in the given order. */
export function missingTools(tools: readonly string[]): string[] {
  return tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0);
}
