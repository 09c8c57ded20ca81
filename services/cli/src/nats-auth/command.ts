// `slicemesh nats-auth`: the keys and the server's authorization block that lock NATS down per
// role (libs/nats permissions.ts). Writes files only; stdout names them and their public keys.

import type { CliIO } from '../run.ts';
import type { Env } from './args.ts';
import { NATS_AUTH_USAGE, parseNatsAuthCommandLine } from './args.ts';
import { writeKeyFiles } from './key-files.ts';

/** Runs `slicemesh nats-auth <argv…>`; errors propagate to run.ts, which prints them on one line. */
export async function natsAuthCommand(argv: readonly string[], io: CliIO, env: Env): Promise<void> {
  const cl = parseNatsAuthCommandLine(argv, env);
  if (cl.help) {
    io.stdout.write(`Usage: ${NATS_AUTH_USAGE}\n`);
    return;
  }
  const result = await writeKeyFiles({ dir: cl.out, scopes: cl.scopes, agents: cl.agents, leafnodes: cl.leafnodes, force: cl.force, ifMissing: cl.ifMissing });
  if (result.kept) {
    io.stdout.write(`slicemesh nats-auth: ${cl.out} already holds every file; kept them\n`);
    return;
  }
  // Public keys only: they name the users in auth.conf (to revoke one, remove its entry).
  const several = cl.scopes.length > 1;
  for (const k of result.keys) io.stdout.write(`wrote ${k.path} (${k.role}${several ? ` of ${JSON.stringify(k.cluster)}` : ''}, public key ${k.nkey})\n`);
  if (result.leafnodes !== undefined) {
    for (const r of result.leafnodes.remotes) io.stdout.write(`wrote ${r.path} (leaf ${r.name}'s hub URL with its password: include it from that leaf's configuration)\n`);
    io.stdout.write(`wrote ${result.leafnodes.users} (the leaves' users: include it inside the hub's leafnodes {} block)\n`);
  }
  const clusters = cl.scopes.map((s) => JSON.stringify(s.cluster)).join(', ');
  io.stdout.write(`wrote ${result.authConf} (${result.keys.length} users of cluster${several ? 's' : ''} ${clusters}; include it from the nats-server configuration)\n`);
}
