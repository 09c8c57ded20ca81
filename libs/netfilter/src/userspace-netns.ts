// The userspace proxies of a node whose network namespace is not the agent's (the agent's
// NETNS setting): a helper process runs the engine there (userspace-host.ts) and this class
// forwards the agent's calls to it over IPC.

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ProxySpec, ProxyStats, UserspaceProxies } from './userspace-proxy.ts';

/**
 * The helper program: userspace-host.ts beside this file when running from source, or the
 * bundle dist/userspace-proxy-host.js (scripts/build.ts) when this code is itself bundled in
 * dist/ or dist/chunks/.
 */
export function userspaceHostFile(base: string = import.meta.url): string {
  const candidates = ['./userspace-host.ts', './userspace-proxy-host.js', '../userspace-proxy-host.js'].map((rel) => fileURLToPath(new URL(rel, base)));
  return candidates.find((f) => existsSync(f)) ?? (candidates[0] as string);
}

interface Reply {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

export class NetnsUserspaceProxier implements UserspaceProxies {
  readonly #netns: string;
  readonly #host: string;
  #child: ChildProcess | null = null;
  #ready: Promise<void> | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  readonly #hostFile: string;

  constructor(opts: { readonly netns: string; readonly host?: string; readonly hostFile?: string }) {
    this.#netns = opts.netns;
    this.#host = opts.host ?? '0.0.0.0';
    this.#hostFile = opts.hostFile ?? userspaceHostFile();
  }

  #start(): Promise<void> {
    if (this.#ready !== null) return this.#ready;
    this.#ready = new Promise((resolve, reject) => {
      const child = spawn('ip', ['netns', 'exec', this.#netns, process.execPath, this.#hostFile, this.#host], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      this.#child = child;
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('message', (m: Reply) => {
        if (m.id === 0) return resolve();
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (m.error !== undefined) p?.reject(new Error(`userspace proxy in netns ${this.#netns}: ${m.error}`));
        else p?.resolve(m.result);
      });
      child.once('exit', (code) => {
        const err = new Error(`userspace proxy helper in netns ${this.#netns} exited ${code}: ${stderr.trim().split('\n')[0] ?? ''}`);
        reject(err);
        for (const p of this.#pending.values()) p.reject(err);
        this.#pending.clear();
        this.#child = null;
        this.#ready = null;
      });
    });
    return this.#ready;
  }

  async #call(op: 'sync' | 'stats', specs?: readonly ProxySpec[]): Promise<unknown> {
    await this.#start();
    const child = this.#child;
    if (child === null) throw new Error(`userspace proxy helper in netns ${this.#netns} is gone`);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      child.send({ id, op, specs });
    });
  }

  async sync(specs: readonly ProxySpec[]): Promise<Record<string, number>> {
    return (await this.#call('sync', specs)) as Record<string, number>;
  }

  async stats(): Promise<ProxyStats> {
    return (await this.#call('stats')) as ProxyStats;
  }

  close(): Promise<void> {
    const child = this.#child;
    if (child === null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.disconnect();
    });
  }
}
