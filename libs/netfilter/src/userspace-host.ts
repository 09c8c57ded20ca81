// Runs the userspace proxies inside another network namespace: `ip netns exec NS node
// userspace-host.ts` started by `NetnsUserspaceProxier` (userspace-netns.ts). Both the proxy
// sockets and the connections to the endpoints must belong to the node's namespace, so the
// whole engine runs there and the agent drives it over the IPC channel. It exits when the
// agent disconnects.

import { UserspaceProxier } from './userspace-proxy.ts';
import type { ProxySpec } from './userspace-proxy.ts';

interface Request {
  readonly id: number;
  readonly op: 'sync' | 'stats';
  readonly specs?: readonly ProxySpec[];
}

const proxier = new UserspaceProxier({ host: process.argv[2] ?? '0.0.0.0' });
process.on('disconnect', () => {
  void proxier.close().then(() => process.exit(0));
});
process.on('message', (req: Request) => {
  const run = req.op === 'sync' ? proxier.sync(req.specs ?? []) : proxier.stats();
  run.then(
    (result) => process.send?.({ id: req.id, result }),
    (e: unknown) => process.send?.({ id: req.id, error: e instanceof Error ? e.message : String(e) }),
  );
});
process.send?.({ id: 0, result: 'ready' });
