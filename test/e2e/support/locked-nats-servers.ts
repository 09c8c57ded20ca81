// Real nats-server processes from the configurations in infra/nats as they ship, locked down: a
// copy of infra/nats under a directory of the test's, with the keys its auth/README.md says to
// generate (writeInfraNatsAuth), and each server on local ports. Clients log in with the seeds
// beside the block the configuration includes (seedOf).

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NatsRole } from '@slicemesh/nats';
import { connectNats } from '@slicemesh/nats';
import { REPO_ROOT, freePort } from '../../../services/stack/src/index.ts';
import { writeInfraNatsAuth } from './nats-auth-files.ts';

export interface LockedServer {
  readonly url: string;
  readonly monitorPort: number;
  /** The leafnode listen port (the hub). */
  readonly leafPort: number;
  /**
   * The seed file of `role` beside the block this server includes (agent.nk: the shared agent key);
   * on a server whose block several clusters share (the hub), `cluster` names whose.
   */
  seedOf(role: NatsRole, cluster?: string): string;
  /** The clusters whose users share this server's block (each with its seeds in a directory of its own); none for a block of one cluster. */
  readonly sharedBy: readonly string[];
  stop(): Promise<void>;
}

/** The files a configuration includes, relative to it. */
export const includesOf = (text: string): string[] => [...text.matchAll(/^\s*include\s+"([^"]+)"/gm)].map((m) => m[1] as string);

/** Copies infra/nats's configurations to `<root>/infra/nats` and generates their keys; returns the copy's directory. */
export async function copyInfraNatsLocked(root: string): Promise<string> {
  const copy = join(root, 'infra/nats');
  mkdirSync(copy, { recursive: true });
  for (const f of readdirSync(join(REPO_ROOT, 'infra/nats')).filter((x) => x.endsWith('.conf'))) copyFileSync(join(REPO_ROOT, 'infra/nats', f), join(copy, f));
  await writeInfraNatsAuth(root);
  return copy;
}

/**
 * Starts `<copy>/<conf>` with its client, monitoring and leafnode ports on free local ones, its
 * store under `<copy>/store-<conf>`, and (for a leaf) its hub URL on `hubLeafPort`. Resolves once
 * the admin's seed logs in.
 */
export async function startLockedServer(binary: string, copy: string, conf: string, hubLeafPort?: number): Promise<LockedServer> {
  const [client, monitor, leaf] = [await freePort(), await freePort(), await freePort()];
  const text = readFileSync(join(copy, conf), 'utf8')
    .replace('0.0.0.0:4222', `127.0.0.1:${client}`)
    .replace('0.0.0.0:8222', `127.0.0.1:${monitor}`)
    .replace('0.0.0.0:7422', `127.0.0.1:${leaf}`)
    .replace('/data/jetstream', join(copy, `store-${conf}`));
  const includes = includesOf(text);
  if (hubLeafPort !== undefined) {
    const remote = join(copy, includes.find((f) => f.includes('leafnode-')) ?? '');
    writeFileSync(remote, readFileSync(remote, 'utf8').replace('@hub:7422', `@127.0.0.1:${hubLeafPort}`));
  }
  const authDir = dirname(join(copy, includes.find((f) => f.endsWith('/auth.conf')) ?? ''));
  // writeNatsAuth puts each cluster's seeds in <dir>/<cluster>/ when a block has several.
  const sharedBy = existsSync(join(authDir, 'admin.nk')) ? [] : readdirSync(authDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  const seedOf = (role: NatsRole, cluster?: string): string => {
    if (sharedBy.length === 0) return join(authDir, `${role}.nk`);
    if (cluster === undefined || !sharedBy.includes(cluster)) throw new Error(`${conf}: its block is shared by ${sharedBy.join(', ')}; name the cluster whose ${role} seed, not ${String(cluster)}`);
    return join(authDir, cluster, `${role}.nk`);
  };
  const file = join(copy, `local-${conf}`);
  writeFileSync(file, text);
  const child: ChildProcess = spawn(binary, ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const url = `nats://127.0.0.1:${client}`;
  for (const until = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 100))) {
    try {
      await (await connectNats({ url, name: 'probe', timeoutMs: 500, nkeySeedFile: seedOf('admin', sharedBy[0]), role: 'admin' })).close();
      break;
    } catch (err) {
      if (child.exitCode !== null || Date.now() > until) {
        child.kill('SIGKILL');
        throw new Error(`nats-server -c ${conf} did not come up: ${stderr || String(err)}`);
      }
    }
  }
  return {
    url,
    monitorPort: monitor,
    leafPort: leaf,
    seedOf,
    sharedBy,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
