// listenTcp for real: a socket opened inside another network namespace answers connections
// made there and not in ours; a taken port and a missing namespace fail with the reason.
// Skips, saying why, where namespaces cannot be made.

import { execFile, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netnsAddFailure } from '../testing/netns-lab.ts';
import { ListenError, listenTcp } from './listen.ts';

const run = promisify(execFile);
const ns = `ct13-ls-${randomUUID().slice(0, 8)}`;
const skip = netnsAddFailure();
const CONNECT_JS = "require('net').connect(Number(process.argv[1]), '127.0.0.1').on('data', (d) => process.stdout.write(d)).on('error', (e) => console.log(e.code))";

beforeAll(() => {
  if (skip !== null) return;
  spawnSync('ip', ['netns', 'add', ns]);
  spawnSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
});
afterAll(() => {
  if (skip === null) spawnSync('ip', ['netns', 'delete', ns]);
});

describe('listenTcp', () => {
  it('opens the socket inside the given namespace; a second listen on the port and a missing namespace fail with the reason', async (ctx) => {
    if (skip !== null) ctx.skip(`cannot create network namespaces: ${skip}`);
    const port = 32000 + Math.floor(Math.random() * 700);
    const srv = await listenTcp({ host: '127.0.0.1', port, netns: ns });
    srv.on('connection', (s) => s.end('inside\n'));
    try {
      expect((await run('ip', ['netns', 'exec', ns, process.execPath, '-e', CONNECT_JS, String(port)])).stdout).toBe('inside\n');
      expect((await run(process.execPath, ['-e', CONNECT_JS, String(port)])).stdout).toBe('ECONNREFUSED\n');
      await expect(listenTcp({ host: '127.0.0.1', port, netns: ns })).rejects.toThrow(new ListenError('EADDRINUSE', { host: '127.0.0.1', port, netns: ns }));
      await expect(listenTcp({ host: '127.0.0.1', port, netns: `${ns}-missing` })).rejects.toThrow(/Cannot open network namespace/);
    } finally {
      srv.close();
    }
  });

  it('without a namespace listens here', async () => {
    const srv = await listenTcp({ host: '127.0.0.1', port: 0 });
    const addr = srv.address();
    srv.close();
    expect(addr).toMatchObject({ address: '127.0.0.1' });
  });
});
