// Where the tests find nats-server. The configurations of infra/nats are started, locked down
// with their generated keys, by locked-nats-servers.ts.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** nats-server on PATH (Debian installs it in /usr/sbin), or undefined. */
export function natsServerBinary(): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(':').filter((d) => d !== ''), '/usr/sbin', '/usr/local/bin'];
  return dirs.map((d) => join(d, 'nats-server')).find((p) => existsSync(p));
}
