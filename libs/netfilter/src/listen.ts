// A listening TCP socket for the agent's health-check node ports, in the agent's own network
// namespace or in the node's one (the agent's NETNS setting). A process cannot switch its own
// namespace from JavaScript, so for another namespace a short-lived helper (`ip netns exec NS
// node`) opens the socket there and hands its descriptor back over the IPC channel; the socket
// keeps the namespace it was made in, and the helper exits.

import { spawn } from 'node:child_process';
import type { Server } from 'node:net';
import { createServer } from 'node:net';

export interface ListenOptions {
  /** Address to bind: an IP, or `0.0.0.0` / `::` for every address of the family. */
  readonly host: string;
  readonly port: number;
  /** Network namespace to listen in (`ip netns` name); unset or '': the agent's own. */
  readonly netns?: string;
}

/** Opens a listening TCP socket; connections arrive as the server's 'connection' events. */
export type Listen = (opts: ListenOptions) => Promise<Server>;

/** Why a listen failed: the errno code (EADDRINUSE, EADDRNOTAVAIL, EACCES, …) and the address. */
export class ListenError extends Error {
  readonly code: string;
  override readonly name = 'ListenError';
  constructor(code: string, opts: ListenOptions) {
    super(`cannot listen on ${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}${opts.netns ? ` in netns ${opts.netns}` : ''}: ${code}`);
    this.code = code;
  }
}

// Runs in the node's namespace: listen, send the socket to the parent, exit once the parent
// disconnects (its copy of the descriptor stays open).
const HELPER = `
const srv = require('net').createServer();
const [host, port] = [process.argv[1], Number(process.argv[2])];
process.on('disconnect', () => srv.close());
srv.once('error', (e) => process.send({ error: e.code || e.message }));
srv.listen({ host, port, exclusive: true }, () => process.send({ ok: true }, srv));
`;

function listenHere(opts: ListenOptions): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => reject(new ListenError(e.code ?? e.message, opts)));
    srv.listen({ host: opts.host, port: opts.port, exclusive: true }, () => resolve(srv));
  });
}

function listenInNetns(opts: ListenOptions & { readonly netns: string }): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', opts.netns, process.execPath, '-e', HELPER, opts.host, String(opts.port)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    let settled = false;
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (e) => {
      if (!settled) reject(new ListenError(e.message, opts));
      settled = true;
    });
    child.on('message', (msg: { ok?: boolean; error?: string }, handle: unknown) => {
      if (settled) return;
      settled = true;
      if (msg.ok === true && handle !== undefined) resolve(handle as Server);
      else reject(new ListenError(msg.error ?? 'no socket received', opts));
      child.disconnect();
    });
    child.once('exit', (code) => {
      if (!settled) reject(new ListenError(stderr.trim().split('\n')[0] || `helper exited ${code}`, opts));
      settled = true;
    });
  });
}

/**
 * The production Listen: a plain `net` server, or one opened inside `netns` when set.
 *
 *     const srv = await listenTcp({ host: '0.0.0.0', port: 32000, netns: 'node-a' });
 *     srv.on('connection', (socket) => http.emit('connection', socket));
 */
export const listenTcp: Listen = (opts) => (opts.netns === undefined || opts.netns === '' ? listenHere(opts) : listenInNetns({ ...opts, netns: opts.netns }));
