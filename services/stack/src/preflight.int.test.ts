// preflight against real servers: both present, one missing, and a NATS without JetStream.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freePort } from './child-process.ts';
import { FRESH_MACHINE_HINT, preflight, preflightMessage } from './preflight.ts';

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/local/bin/nats-server', '/usr/bin/nats-server'].find((p) => existsSync(p));

describe('preflight', () => {
  it('both servers answering: no problems', async () => {
    expect(await preflight({ natsUrl: NATS_URL, databaseUrl: DATABASE_URL })).toEqual({ problems: [] });
  });

  it('nothing listening: each server is named with its URL and start command, NATS first', async () => {
    const port = await freePort();
    const r = await preflight({ natsUrl: `nats://127.0.0.1:${port}`, databaseUrl: `postgres://postgres:secret@127.0.0.1:${port}/postgres`, timeoutMs: 1000 });
    expect(r.problems).toHaveLength(2);
    expect(r.problems[0]).toMatch(new RegExp(`^NATS not reachable at nats://127\\.0\\.0\\.1:${port}: .* start it with: start-stop-daemon`));
    expect(r.problems[1]).toMatch(new RegExp(`^Postgres not reachable at postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${port}/postgres: .* start it with: pg_ctlcluster`));
    expect(preflightMessage(r.problems)).toBe(['slicemesh: cannot start the stack:', `  - ${r.problems[0]}`, `  - ${r.problems[1]}`, FRESH_MACHINE_HINT, ''].join('\n'));
  });

  it.skipIf(NATS_SERVER === undefined)('a NATS server without JetStream is reported as such', async () => {
    const port = await freePort();
    const child = spawn(NATS_SERVER as string, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    try {
      let r = await preflight({ natsUrl: `nats://127.0.0.1:${port}`, databaseUrl: DATABASE_URL });
      for (let i = 0; i < 50 && r.problems.some((p) => p.startsWith('NATS not reachable')); i++) {
        await new Promise((done) => setTimeout(done, 100)); // the server is still starting
        r = await preflight({ natsUrl: `nats://127.0.0.1:${port}`, databaseUrl: DATABASE_URL });
      }
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toMatch(/answers but JetStream is not usable .* restart nats-server with -js/);
    } finally {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
  });
});
