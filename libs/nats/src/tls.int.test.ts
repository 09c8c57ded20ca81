// NATS over TLS as infra/README.md describes it: the server gets a `tls` block, the services a
// `tls://` URL, and a private CA reaches Node through NODE_EXTRA_CA_CERTS (read once at process
// start, hence a child process per client here). A real nats-server, a CA and a server
// certificate for localhost made with openssl; an untrusted CA must fail the connect. The URL
// names the server by host name: for an IP address the NATS client checks the certificate
// against "localhost" (it passes no server name), so a certificate for the IP alone fails.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findNatsServerBinary, freeLocalPort } from './local-cluster.ts';

const binary = findNatsServerBinary();
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const SKIPPED =
  binary === undefined ? 'SKIPPED: nats-server is not installed' : !hasOpenssl ? 'SKIPPED: openssl is not installed (needed to make the test CA)' : undefined;

/** A self-signed CA in `dir` (`<name>.crt`, `<name>.key`); returns the certificate's path. */
function makeCa(dir: string, name: string): string {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.crt`);
  return join(dir, `${name}.crt`);
}

function makeServerCert(dir: string, ca: string): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.crt');
}

/** Runs connectNats in a child whose Node trusts `caFile`: resolves with its one-line verdict. */
function connectFromChild(url: string, caFile: string | undefined): Promise<{ code: number | null; out: string }> {
  const script = `
    import { connectNats, jetstreamManager } from '@slicemesh/nats';
    try {
      const nc = await connectNats({ url: ${JSON.stringify(url)}, name: 'tls-test', timeoutMs: 5000 });
      const info = await (await jetstreamManager(nc)).getAccountInfo();
      console.log(JSON.stringify({ ok: true, tls: nc.info?.tls_required === true, streams: info.streams }));
      await nc.close();
    } catch (e) {
      console.log(JSON.stringify({ ok: false, error: String(e?.message ?? e) + ' <- ' + String(e?.cause?.message ?? '') }));
      process.exitCode = 1;
    }`;
  const env = { ...process.env, ...(caFile === undefined ? {} : { NODE_EXTRA_CA_CERTS: caFile }) };
  if (caFile === undefined) delete env['NODE_EXTRA_CA_CERTS'];
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out: out.trim() })));
}

describe.skipIf(SKIPPED !== undefined)(SKIPPED ?? 'NATS over TLS (real nats-server, openssl-made CA)', () => {
  let dir: string;
  let server: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nats-tls-int-'));
    makeCa(dir, 'ca');
    makeCa(dir, 'other-ca');
    makeServerCert(dir, 'ca');
    const port = await freeLocalPort();
    url = `tls://localhost:${port}`;
    const conf = join(dir, 'nats.conf');
    writeFileSync(conf, `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }\ntls { cert_file: "${join(dir, 'server.crt')}", key_file: "${join(dir, 'server.key')}" }\n`);
    server = spawn(binary as string, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    server.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    for (const until = Date.now() + 10_000; !stderr.includes('Server is ready'); ) {
      if (Date.now() > until || server.exitCode !== null) throw new Error(`nats-server did not start with TLS: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 30_000);

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('a client trusting the CA (NODE_EXTRA_CA_CERTS) connects over TLS and uses JetStream', async () => {
    const r = await connectFromChild(url, join(dir, 'ca.crt'));
    expect(r.out).toContain('"ok":true');
    expect(JSON.parse(r.out.split('\n').at(-1) ?? '{}')).toMatchObject({ ok: true, tls: true });
    expect(r.code).toBe(0);
  }, 30_000);

  it('a client trusting another CA is refused: the server certificate is checked', async () => {
    const r = await connectFromChild(url, join(dir, 'other-ca.crt'));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/"ok":false/);
    expect(r.out).toMatch(/certificate|self.signed|verify/i);
  }, 30_000);
});
