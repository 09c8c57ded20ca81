// A service as a child process with its settings in the environment — exactly how it runs in a
// container — so it can be killed with SIGKILL. The child runs the same form as this process:
// the built dist/<svc>.js under a built stack, the TypeScript sources (Node strips the types)
// under the sources.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLocalPort } from '@slicemesh/nats';
import { builtRootOf } from '@slicemesh/runtime';
import type { Incarnation } from './component.ts';
import type { Env } from './service-env.ts';

const BUILT_ROOT = builtRootOf(import.meta.url);

/** The repository root (services/stack/src → ../../..), or the directory holding dist/ when built. */
export const REPO_ROOT = BUILT_ROOT ?? fileURLToPath(new URL('../../../', import.meta.url));

export type ServiceProgram = 'watcher' | 'slicer' | 'hints' | 'publisher' | 'proxy-agent' | 'cluster-sim' | 'stack';

/** The entry file of a service, absolute: <builtRoot>/dist/<program>.js when built, else its src/main.ts. */
export function mainOf(program: ServiceProgram, builtRoot = BUILT_ROOT): string {
  if (builtRoot !== undefined) return join(builtRoot, 'dist', `${program}.js`);
  return fileURLToPath(new URL(`../../${program}/src/main.ts`, import.meta.url));
}

/** Node's arguments that run a service: source maps for the bundles' stack traces. */
export function nodeArgsOf(program: ServiceProgram, builtRoot = BUILT_ROOT): string[] {
  return builtRoot === undefined ? [mainOf(program)] : ['--enable-source-maps', mainOf(program, builtRoot)];
}

/** A free TCP port on 127.0.0.1 right now (the child binds it moments later): @slicemesh/nats' helper for its local servers. */
export const freePort: () => Promise<number> = freeLocalPort;

/** Variables a child keeps from this process; everything else comes from the service's Env. */
// NODE_OPTIONS passes through so that, e.g., `NODE_OPTIONS=--cpu-prof npm run bench` profiles every service.
const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS'];

export interface ChildOptions {
  readonly program: ServiceProgram;
  readonly env: Env;
  /** The port the env sets as HEALTH_PORT: readiness is polled at /readyz there. */
  readonly healthPort: number;
  /** Run the bundles in <builtRoot>/dist (`npm run build`); defaults to this process's own form. */
  readonly builtRoot?: string;
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
  const child = spawn(process.execPath, nodeArgsOf(opts.program, opts.builtRoot ?? BUILT_ROOT), { cwd: REPO_ROOT, env: { ...env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
