// Real nats-server processes from the configurations in infra/nats, for the multi-cluster test:
// the same files with their fixed ports, hostnames and store directory swapped for local ones.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectNats } from '@slicemesh/nats';
import { REPO_ROOT, freePort } from '../../../services/stack/src/index.ts';

/** nats-server on PATH (Debian installs it in /usr/sbin), or undefined. */
export function natsServerBinary(): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(':').filter((d) => d !== ''), '/usr/sbin', '/usr/local/bin'];
  return dirs.map((d) => join(d, 'nats-server')).find((p) => existsSync(p));
}

export interface RunningServer {
  readonly url: string;
  /** The leafnode listen port (hub only). */
  readonly leafPort?: number;
  stop(): Promise<void>;
}

export interface Substitutions {
  /** Port of the hub's leafnode listener that leaves connect to. */
  readonly hubLeafPort?: number;
}

/**
 * Starts `infra/nats/<conf>` with: client port, monitoring port and (for a hub) leafnode port
 * replaced by free local ones, `hub:7422` by the hub's local leafnode port, /data/jetstream by a
 * directory under `dir`. Resolves once the server accepts clients.
 */
export async function startConfiguredServer(binary: string, conf: string, dir: string, subs: Substitutions = {}): Promise<RunningServer> {
  const [client, http, leaf] = [await freePort(), await freePort(), await freePort()];
  const store = join(dir, conf.replace(/\W/g, '_'));
  await mkdir(store, { recursive: true });
  let text = readFileSync(join(REPO_ROOT, 'infra/nats', conf), 'utf8')
    .replace('0.0.0.0:4222', `127.0.0.1:${client}`)
    .replace('0.0.0.0:8222', `127.0.0.1:${http}`)
    .replace('0.0.0.0:7422', `127.0.0.1:${leaf}`)
    .replace('/data/jetstream', store);
  if (subs.hubLeafPort !== undefined) text = text.replace('hub:7422', `127.0.0.1:${subs.hubLeafPort}`);
  const file = join(dir, conf);
  await writeFile(file, text);
  const child: ChildProcess = spawn(binary, ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const url = `nats://127.0.0.1:${client}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      const nc = await connectNats({ url, name: 'probe', timeoutMs: 500 });
      await nc.close();
      break;
    } catch (err) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`nats-server -c ${conf} did not come up: ${stderr || String(err)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    ...(text.includes('leafnodes {\n  listen') ? { leafPort: leaf } : {}),
    stop: async () => {
      if (child.exitCode !== null) return;
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await gone;
    },
  };
}
