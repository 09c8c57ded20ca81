// The lab building blocks against the real kernel: a pod behind a node behind a fabric bridge
// answers a client with its name, and destroy leaves no namespace or server behind. Skips with
// the reason when not root or when namespaces cannot be created.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECT_ONCE_JS, NetnsLabBase, NetnsResources, byName, ip, missingTools, netnsAddFailure, spawnNodeIn } from './netns-lab.ts';

const unavailable = typeof process.getuid === 'function' && process.getuid() !== 0 ? 'needs root (network namespaces)' : netnsAddFailure();
const PORT = 8080;
const prefix = `smlab${randomBytes(3).toString('hex')}`;
const node = `${prefix}-n1`;
const pod = { name: 'web-1', ns: `${prefix}-n1p1`, ip: '10.250.1.2' };

const namespaces = (): string[] => spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n').map((l) => l.split(' ')[0] ?? '');

/** One connection from namespace `from`, answered with its outcome. */
function connectOnce(from: string, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawnNodeIn(from, `${CONNECT_ONCE_JS}\nonce(process.argv[1], Number(process.argv[2]), 1000).then((r) => console.log(r));`, [host, String(port)]);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`client exited ${code}`))));
  });
}

describe.skipIf(unavailable !== null)(`netns lab building blocks${unavailable === null ? '' : ` (skipped: ${unavailable})`}`, () => {
  const made = new NetnsResources();
  let fabric = '';
  let client = '';
  beforeAll(async () => {
    ({ fabric, client } = made.addFabric(prefix, 'cli', '192.168.79.100'));
    made.plug(node, 'n1', fabric, '192.168.79.11');
    ip(['netns', 'exec', node, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    made.addPod(node, 'pod1', pod.ns, pod.ip, '10.250.1.1');
    ip(['-n', client, 'route', 'add', '10.250.1.0/24', 'via', '192.168.79.11']);
    await made.startServers([pod], PORT);
  });
  afterAll(() => made.destroy());

  const cases = [
    { name: 'a pod on a node answers a client across the fabric with its name', host: pod.ip, port: PORT, want: 'web-1' },
    { name: 'a port nobody listens on is refused', host: pod.ip, port: PORT + 1, want: 'ECONNREFUSED' },
    { name: 'an address behind no route times out or is unreachable', host: '10.250.9.9', port: PORT, want: /^(TIMEOUT|EHOSTUNREACH|ENETUNREACH)$/ },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const got = await connectOnce(client, tc.host, tc.port);
      if (typeof tc.want === 'string') expect(got).toBe(tc.want);
      else expect(got).toMatch(tc.want);
    });
  }

  it('a failing ip step throws with the command and its message', () => {
    expect(() => ip(['-n', node, 'link', 'set', 'no-such-link', 'up'])).toThrow(/^ip -n \S+ link set no-such-link up: \S/);
  });

  it('destroy deletes every namespace it made, even one with a server running; a second destroy is harmless', async () => {
    const lab = new NetnsResources();
    const ns = `${prefix}-d`;
    lab.add(ns);
    await lab.startServers([{ name: 'gone', ns }], PORT);
    expect(namespaces()).toContain(ns);
    lab.destroy();
    lab.destroy();
    expect(namespaces()).not.toContain(ns);
  });

  it('a lab whose builder throws deletes what the builder made and rethrows', () => {
    const ns = `${prefix}-x`;
    const build = (m: NetnsResources): never => {
      m.add(ns);
      throw new Error('builder failed');
    };
    expect(() => new NetnsLabBase(build, PORT)).toThrow('builder failed');
    expect(namespaces()).not.toContain(ns);
  });

  it('a built lab keeps the builder\'s client, nodes and pods, finds them by name, and destroy deletes its namespaces', () => {
    const lab = new NetnsLabBase((m) => {
      const { client: c } = m.addFabric(`${prefix}b`, 'c', '192.168.80.100');
      return { client: c, nodes: [{ name: 'n1', ns: c }], pods: [{ name: 'p1', ns: c }] };
    }, PORT);
    expect([lab.client, lab.node('n1').ns, lab.pod('p1').ns]).toEqual([`${prefix}b-cli`, `${prefix}b-cli`, `${prefix}b-cli`]);
    expect(() => lab.pod('n1')).toThrow('no pod n1');
    expect(namespaces()).toEqual(expect.arrayContaining([`${prefix}b-fab`, `${prefix}b-cli`]));
    lab.destroy();
    expect(namespaces().filter((n) => n.startsWith(`${prefix}b-`))).toEqual([]);
  });
});

describe('netns lab helpers without the kernel', () => {
  const items = [{ name: 'a', n: 1 }, { name: 'b', n: 2 }];
  const cases = [
    { name: 'byName finds the item with that name', run: () => byName(items, 'b', 'pod').n, want: 2 },
    { name: 'missingTools lists only the tools not on PATH, in order', run: () => missingTools(['no-such-tool-sm1', 'sh', 'no-such-tool-sm2']), want: ['no-such-tool-sm1', 'no-such-tool-sm2'] },
  ];
  for (const tc of cases) it(tc.name, () => expect(tc.run()).toEqual(tc.want));

  it('byName throws "no <kind> <name>" for an unknown name', () => {
    expect(() => byName(items, 'c', 'node')).toThrow('no node c');
  });
});
