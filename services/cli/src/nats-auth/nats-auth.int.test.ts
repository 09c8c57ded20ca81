// What `slicemesh nats-auth` writes locks a real nats-server down: a server whose configuration
// includes the generated auth.conf (as infra/nats does) lets each seed do its role's work and
// refuses the rest, and `slicemesh log` reads the live log with the reader's seed.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection, NatsRole } from '@slicemesh/nats';
import { DEFAULT_NAMES, NatsAuthorizationError, connectNats, ensureStreams, findNatsServerBinary, freeLocalPort, jetstream, jetstreamManager, kubeNodeSubject, kubeObjectSubject, publishAcked } from '@slicemesh/nats';
import { run } from '../run.ts';

const CLUSTER = 'c1';
const binary = findNatsServerBinary();
const SKIPPED = binary === undefined ? 'SKIPPED: nats-server is not installed (looked on PATH, /usr/sbin, /usr/local/bin, /usr/bin)' : undefined;

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(argv: readonly string[]): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdin: '', stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, env: {} });
  return { code, stdout, stderr };
}

/** Resolves with the error `p` fails with; fails the test when it succeeds. */
async function failure(p: Promise<unknown>): Promise<unknown> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the call succeeded').toBeDefined();
  return err;
}

/** The error and its causes as one line, for matching the server's verdict wherever it sits. */
function causeChain(err: unknown): string {
  const chain: string[] = [];
  for (let e: unknown = err; e !== undefined && chain.length < 5; e = e instanceof Error ? e.cause : undefined) chain.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  return chain.join(' <- ');
}

describe.skipIf(SKIPPED !== undefined)(SKIPPED ?? 'slicemesh nats-auth on a real nats-server', () => {
  let dir: string;
  let auth: string;
  let server: ChildProcess;
  let url: string;
  const open: NatsConnection[] = [];
  let watcherSeq = 0;

  const as = async (role: NatsRole, file = `${role}.nk`): Promise<NatsConnection> => {
    const nc = await connectNats({ url, name: `nats-auth-${role}`, timeoutMs: 2000, nkeySeedFile: join(auth, file), role });
    open.push(nc);
    return nc;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nats-auth-int-'));
    auth = join(dir, 'auth');
    const made = await cli(['nats-auth', '--cluster', CLUSTER, '--out', auth]);
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const port = await freeLocalPort();
    url = `nats://127.0.0.1:${port}`;
    // As infra/nats/single.conf does it: the block is included, relative to the configuration.
    const conf = join(dir, 'nats.conf');
    writeFileSync(conf, `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\ninclude "auth/auth.conf"\n`);
    server = spawn(binary as string, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    server.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    const until = Date.now() + 10_000;
    for (;;) {
      try {
        // The admin declares the streams, as a setup job would.
        await ensureStreams(await jetstreamManager(await as('admin')), DEFAULT_NAMES);
        break;
      } catch (err) {
        if (Date.now() > until || server.exitCode !== null) throw new Error(`nats-server did not start with the generated auth.conf: ${stderr || String(err)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }, 20_000);

  afterAll(async () => {
    await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const web = kubeObjectSubject({ cluster: CLUSTER, partition: 0, kind: 'Service', namespace: 'default', name: 'web' });
  const node = kubeNodeSubject({ cluster: CLUSTER, name: 'n1' });

  it('the watcher seed publishes its cluster\'s objects to KUBE', async () => {
    const js = jetstream(await as('watcher'));
    const ack = await publishAcked(js, web, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' } }, { msgID: 'web-1' });
    expect(ack.seq).toBeGreaterThan(0);
    watcherSeq = ack.seq;
  });

  it('the watcher seed may not publish another cluster\'s objects', async () => {
    const js = jetstream(await as('watcher'));
    const other = kubeObjectSubject({ cluster: 'c2', partition: 0, kind: 'Service', namespace: 'default', name: 'web' });
    expect(causeChain(await failure(publishAcked(js, other, { forged: true }, { msgID: 'other-1', retries: 0 })))).toMatch(/permissions violation/i);
  });

  it('the agent seed may not publish to KUBE', async () => {
    const js = jetstream(await as('agent'));
    expect(causeChain(await failure(publishAcked(js, node, { forged: true }, { msgID: 'agent-node', retries: 0 })))).toMatch(/permissions violation/i);
  });

  it('the reader seed may not publish either, and the reader reads the live log with slicemesh log', async () => {
    const js = jetstream(await as('reader'));
    expect(causeChain(await failure(publishAcked(js, web, { forged: true }, { msgID: 'reader-web', retries: 0 })))).toMatch(/permissions violation/i);
    const r = await cli(['log', 'at', 'latest', '--output', 'json', '--nats-url', url, '--cluster', CLUSTER, '--nats-nkey-seed-file', join(auth, 'reader.nk')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // The state after the watcher's message: the reader read KUBE up to it.
    expect((JSON.parse(r.stdout) as { at: { seq: number } }).at.seq).toBe(watcherSeq);
  });

  it('slicemesh log without a seed is refused, and says to check the credentials', async () => {
    const r = await cli(['log', 'at', 'latest', '--nats-url', url, '--cluster', CLUSTER]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^slicemesh: cannot open the live log .*Authorization Violation/);
  });

  it('a connection without credentials is refused', async () => {
    expect(await failure(connectNats({ url, name: 'nats-auth-anonymous', timeoutMs: 2000 }))).toBeInstanceOf(NatsAuthorizationError);
  });

  it('an existing set is kept without --force; with it the keys rotate, and after a reload the old seed is refused', async () => {
    const kept = await cli(['nats-auth', '--cluster', CLUSTER, '--out', auth]);
    expect(kept.code).toBe(2);
    expect(kept.stderr).toContain(`${join(auth, 'watcher.nk')} exists`);
    const old = join(dir, 'old-watcher.nk');
    copyFileSync(join(auth, 'watcher.nk'), old);
    const rotated = await cli(['nats-auth', '--cluster', CLUSTER, '--out', auth, '--force']);
    expect(rotated.code).toBe(0);
    server.kill('SIGHUP'); // nats-server reloads its configuration, includes too
    // Until the reload takes: the old seed still connects before it, and a connect that times
    // out on a loaded machine (NatsUnreachableError) says nothing either way.
    const until = Date.now() + 15_000;
    let refused: unknown;
    while (!(refused instanceof NatsAuthorizationError) && Date.now() < until) {
      refused = await connectNats({ url, name: 'nats-auth-old', timeoutMs: 2000, nkeySeedFile: old }).then(
        async (nc) => void (await nc.close()),
        (e: unknown) => e,
      );
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(refused).toBeInstanceOf(NatsAuthorizationError);
    const js = jetstream(await as('watcher'));
    expect((await publishAcked(js, web, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' } }, { msgID: 'web-2' })).seq).toBeGreaterThan(0);
  });
});
