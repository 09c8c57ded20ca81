// A service as a child process: `node --import tsx services/<svc>/src/main.ts` with its settings
// in the environment — exactly how it runs in a container — so it can be killed with SIGKILL.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Incarnation } from './component.ts';
import type { Env } from './service-env.ts';

/** The repository root (services/stack/src → ../../..). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export type ServiceProgram = 'watcher' | 'slicer' | 'hints' | 'proxy-agent' | 'cluster-sim' | 'stack';

/** The main.ts of a service, absolute. */
export function mainOf(program: ServiceProgram): string {
  return fileURLToPath(new URL(`../../${program}/src/main.ts`, import.meta.url));
}

/** A free TCP port on 127.0.0.1 right now (the child binds it moments later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Variables a child keeps from this process; everything else comes from the service's Env. */
const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'NODE_EXTRA_CA_CERTS'];

export interface ChildOptions {
  readonly program: ServiceProgram;
  readonly env: Env;
  /** The port the env sets as HEALTH_PORT: readiness is polled at /readyz there. */
  readonly healthPort: number;
  /** Receives the child's stdout and stderr (its JSON log lines); default: dropped. */
  readonly output?: (chunk: Buffer) => void;
  /** Wait for exit after SIGTERM before SIGKILL, ms. Defaults to 15000. */
  readonly stopTimeoutMs?: number;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function readyz(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Starts the program; `ready` resolves once /readyz answers 200 and rejects if the child exits first. */
export function startChild(opts: ChildOptions): Incarnation {
  const env: Record<string, string> = {};
  for (const k of INHERITED) if (process.env[k] !== undefined) env[k] = process.env[k] as string;
  const child = spawn(process.execPath, ['--import', 'tsx', mainOf(opts.program)], { cwd: REPO_ROOT, env: { ...env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const onOutput = (chunk: Buffer): void => {
    opts.output?.(chunk);
    tail.push(...chunk.toString('utf8').split('\n').filter((l) => l.trim() !== ''));
    tail.splice(0, Math.max(0, tail.length - 5));
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  const gone = exited(child);
  let ready = false;
  const readyPromise = (async () => {
    let exit: string | undefined;
    void gone.then(() => (exit = `exited (code ${child.exitCode}, signal ${child.signalCode})`));
    for (;;) {
      if (exit !== undefined) throw new Error(`${opts.program} ${exit} before it was ready; last output: ${tail.join(' | ') || '(none)'}`);
      if (await readyz(opts.healthPort)) {
        ready = true;
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  readyPromise.catch(() => {});
  void gone.then(() => (ready = false));
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    child.kill(signal);
    await gone;
  };
  return {
    ready: readyPromise,
    isReady: () => ready,
    healthPort: () => opts.healthPort,
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    kill,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.stopTimeoutMs ?? 15_000);
      child.kill('SIGTERM');
      await gone;
      clearTimeout(timer);
    },
  };
}
