// Which server a nats-kill takes down when it is not aimed at the KUBE leader. The plan draws
// one from the seed, but a kill of a server no service is connected to tests nothing: no
// connection drops, none reconnects, and the campaign's reconnect figures are empty by chance
// (one CI run drew the same idle server twice). So the kill goes to a server that holds service
// connections, the drawn one when it does.

/** The connections the campaign opens itself (its stack's admin connection, its probes). */
const OWN_CONNECTION = /^(stack-|chaos-|slicemesh-preflight)/;

export interface ServerClients {
  readonly name: string;
  /** Client names connected to it now; undefined when its monitoring port did not answer. */
  readonly clients: readonly string[] | undefined;
}

/** The service connections among `clients` (the campaign's own left out). */
export function serviceConnections(clients: readonly string[]): number {
  return clients.filter((n) => !OWN_CONNECTION.test(n)).length;
}

/**
 * The server to kill: the drawn one (`drawn` modulo the count) when it holds a service
 * connection or nothing is known, else the one drawn the same way among those that hold any.
 */
export function pickNatsVictim(drawn: number, servers: readonly ServerClients[]): { readonly name: string; readonly redirected: boolean } {
  if (servers.length === 0) throw new RangeError('no servers to pick from');
  const first = servers[drawn % servers.length] as ServerClients;
  const busy = servers.filter((s) => s.clients !== undefined && serviceConnections(s.clients) > 0);
  if (first.clients === undefined || busy.length === 0 || busy.includes(first)) return { name: first.name, redirected: false };
  return { name: (busy[drawn % busy.length] as ServerClients).name, redirected: true };
}
