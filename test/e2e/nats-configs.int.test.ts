// Every NATS configuration in infra/nats passes the server's own configuration check once the keys
// infra/nats/auth/README.md tells you to generate are there (a copy of the configurations gets
// them, the repository's own directory is left alone), each locks its clients down with the block
// of its own cluster, the leaves log in to the hub with their own credentials, and every stream
// definition there is a complete JetStream stream configuration.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsAuthorizationError, connectNats } from '@slicemesh/nats';
import { REPO_ROOT } from '../../services/stack/src/index.ts';
import { natsServerBinary } from './support/nats-servers.ts';
import type { LockedServer } from './support/locked-nats-servers.ts';
import { copyInfraNatsLocked, includesOf, startLockedServer } from './support/locked-nats-servers.ts';

const DIR = join(REPO_ROOT, 'infra/nats');
const binary = natsServerBinary();
const confs = readdirSync(DIR).filter((f) => f.endsWith('.conf')).sort();
const streams = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

interface Scope {
  readonly cluster: string;
  readonly prefix: string;
  /** The JetStream API the mcs reaches the exports bucket through: its own server's, or the hub's domain. */
  readonly exportsApi: string;
}

/** The clusters (with subject prefixes) each configuration's clients belong to (the multi-cluster recipe's): the hub's block holds both clusters' users. */
const SCOPES: Readonly<Record<string, readonly Scope[]>> = {
  'single.conf': [{ cluster: 'local', prefix: '', exportsApi: '$JS.API' }],
  'cluster-1.conf': [{ cluster: 'local', prefix: '', exportsApi: '$JS.API' }],
  'cluster-2.conf': [{ cluster: 'local', prefix: '', exportsApi: '$JS.API' }],
  'cluster-3.conf': [{ cluster: 'local', prefix: '', exportsApi: '$JS.API' }],
  'hub.conf': [
    { cluster: 'cluster-a', prefix: 'a.', exportsApi: '$JS.API' },
    { cluster: 'cluster-b', prefix: 'b.', exportsApi: '$JS.API' },
  ],
  'leaf-a.conf': [{ cluster: 'cluster-a', prefix: 'a.', exportsApi: '$JS.hub.API' }],
  'leaf-b.conf': [{ cluster: 'cluster-b', prefix: 'b.', exportsApi: '$JS.hub.API' }],
};
const ROLES = ['watcher', 'slicer', 'hints', 'publisher', 'mcs', 'agent', 'reader', 'admin'];

/** Each user entry of a block: its comment line (role, and cluster in a shared block) and its permissions. */
function usersOfBlock(block: string): { comment: string; text: string }[] {
  return block.split(/\n(?= {4}# )/).slice(1).map((e) => ({ comment: e.split('\n')[0]?.trim() ?? '', text: e }));
}

/** `nats-server -t -c file`: '' on success (the verdict goes to stderr); throws with the server's complaint. */
function check(file: string): string {
  return execFileSync(binary as string, ['-t', '-c', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe.skipIf(binary === undefined)('infra/nats configurations (nats-server -t)', () => {
  let root: string;
  let copy: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'nats-confs-'));
    copy = await copyInfraNatsLocked(root);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('covers a single server, a 3-node cluster and a hub with two leaves', () => {
    expect(confs).toEqual(['cluster-1.conf', 'cluster-2.conf', 'cluster-3.conf', 'hub.conf', 'leaf-a.conf', 'leaf-b.conf', 'single.conf']);
  });
  for (const conf of confs) {
    it(`${conf} is valid with the generated keys`, () => {
      expect(check(join(copy, conf))).toBe('');
    });
    const scopes = SCOPES[conf] ?? [];
    it(`${conf} locks its clients down with the nkey users of ${scopes.map((x) => x.cluster).join(' and ')}, which the README's commands write`, () => {
      const auth = includesOf(readFileSync(join(DIR, conf), 'utf8')).filter((f) => f.endsWith('/auth.conf'));
      expect(auth.length, 'one authorization block').toBe(1);
      const block = readFileSync(join(copy, auth[0] as string), 'utf8');
      const users = usersOfBlock(block);
      const shared = scopes.length > 1;
      expect(users.length).toBe(ROLES.length * scopes.length);
      for (const { cluster, prefix, exportsApi } of scopes) {
        expect(block.split('\n')[0]).toContain(`"${cluster}"`);
        for (const role of ROLES) {
          const user = users.find((u) => u.comment === (shared ? `# ${role} of cluster "${cluster}"` : `# ${role}`));
          expect(user, `${role} of ${cluster}`).toBeDefined();
          // The watcher publishes its cluster's subjects, prefix included; the mcs reaches the exports bucket.
          if (role === 'watcher') expect(user?.text).toContain(`"${prefix}kube.${cluster}.>"`);
          if (role === 'mcs') expect(user?.text).toContain(`"${exportsApi}.STREAM.INFO.KV_exports"`);
        }
      }
    });
  }
  it('a configuration whose generated block is missing is rejected: none runs open by accident', () => {
    const alone = mkdtempSync(join(tmpdir(), 'nats-conf-'));
    copyFileSync(join(DIR, 'single.conf'), join(alone, 'single.conf'));
    expect(() => check(join(alone, 'single.conf'))).toThrow(/auth\/auth\.conf/);
  });
  it('a broken configuration is rejected (the check can fail)', () => {
    const bad = join(copy, 'bad.conf');
    writeFileSync(bad, readFileSync(join(DIR, 'single.conf'), 'utf8').replace('store_dir', 'store_dirr'));
    expect(() => check(bad)).toThrow(/store_dirr/);
  });
  it('every JetStream domain is distinct and the leaves dial the hub with credentials of their own', () => {
    const domain = (f: string): string | undefined => /domain:\s*(\S+)/.exec(readFileSync(join(DIR, f), 'utf8'))?.[1];
    expect(['hub.conf', 'leaf-a.conf', 'leaf-b.conf'].map(domain)).toEqual(['hub', 'a', 'b']);
    const users = readFileSync(join(copy, 'auth/hub/leafnodes.conf'), 'utf8');
    for (const leaf of ['leaf-a', 'leaf-b']) {
      const text = readFileSync(join(DIR, `${leaf}.conf`), 'utf8');
      expect(text).toMatch(/remotes: \[\s*\{ url: \$HUB_LEAF_URL \}\s*\]/);
      const remote = includesOf(text).find((f) => f.includes('leafnode-')) ?? '';
      const url = new URL(/HUB_LEAF_URL: "([^"]+)"/.exec(readFileSync(join(copy, remote), 'utf8'))?.[1] ?? '');
      expect(`${url.protocol}//${url.host}`).toBe('nats-leaf://hub:7422');
      expect(url.username).toBe(leaf);
      expect(users).toContain(`{ user: "${leaf}", password: "${url.password}" }`);
    }
    expect(includesOf(readFileSync(join(DIR, 'hub.conf'), 'utf8'))).toContain('auth/hub/leafnodes.conf');
    for (const f of ['cluster-1.conf', 'cluster-2.conf', 'cluster-3.conf']) expect(readFileSync(join(DIR, f), 'utf8')).toMatch(/routes: \[\s*nats-route:\/\/nats-1:6222\s*nats-route:\/\/nats-2:6222\s*nats-route:\/\/nats-3:6222\s*\]/);
  });

  describe('running: clients and leaves log in or are refused', () => {
    const running: LockedServer[] = [];
    afterAll(async () => {
      await Promise.all(running.map((r) => r.stop()));
    });
    const start = async (conf: string, hubLeafPort?: number): Promise<LockedServer> => {
      const s = await startLockedServer(binary as string, copy, conf, hubLeafPort);
      running.push(s);
      return s;
    };

    /** How many leafnode connections a server's /leafz lists, once `want` (or after `ms`). */
    const leafConnections = async (monitor: number, want: number, ms = 10_000): Promise<number> => {
      let n = 0;
      for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
        const body = (await fetch(`http://127.0.0.1:${monitor}/leafz`).then((r) => r.json(), () => ({}))) as { leafnodes?: number };
        n = body.leafnodes ?? 0;
        if (n >= want) break;
      }
      return n;
    };

    it('single.conf admits its seeds and refuses a client without credentials', async () => {
      const s = await start('single.conf');
      await (await connectNats({ url: s.url, name: 'configs-reader', timeoutMs: 2000, nkeySeedFile: s.seedOf('reader'), role: 'reader' })).close();
      expect(await connectNats({ url: s.url, name: 'configs-anonymous', timeoutMs: 2000 }).catch((e: unknown) => e)).toBeInstanceOf(NatsAuthorizationError);
    });

    it('the hub admits leaf-a with its credentials; leaf-b, its password changed, stays out', async () => {
      // leaf-b's copy of its credentials goes wrong; the hub keeps the generated ones.
      const remoteB = join(copy, 'auth/hub/leafnode-leaf-b.conf');
      writeFileSync(remoteB, readFileSync(remoteB, 'utf8').replace(/(leaf-b:)[^@]+@/, '$1wrong@'));
      const hub = await start('hub.conf');
      const a = await start('leaf-a.conf', hub.leafPort);
      const b = await start('leaf-b.conf', hub.leafPort);
      expect(await leafConnections(a.monitorPort, 1)).toBe(1);
      // leaf-b retries every second; given two, it is still refused and the hub has leaf-a alone.
      expect(await leafConnections(b.monitorPort, 1, 2500)).toBe(0);
      expect(await leafConnections(hub.monitorPort, 2, 500)).toBe(1);
    });
  });
});

describe('infra/nats stream definitions', () => {
  for (const f of streams) {
    it(`${f} names the stream, its storage and limits, and sources only through a leaf domain`, () => {
      const c = JSON.parse(readFileSync(join(DIR, f), 'utf8')) as { name: string; storage: string; retention: string; duplicate_window: number; sources?: { external?: { api: string } }[] };
      expect(c.name).toMatch(/^(KUBE|SLICES|DLQ)$/);
      expect(c.storage).toBe('file');
      expect(c.retention).toBe('limits');
      expect(c.duplicate_window).toBe(120_000_000_000);
      for (const s of c.sources ?? []) expect(s.external?.api).toMatch(/^\$JS\.[a-z]+\.API$/);
    });
  }
});
