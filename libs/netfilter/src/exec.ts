// The one seam between the netfilter adapters and the operating system: run a command, feed
// it stdin, get its exit code and output. Adapters take an `Exec`, so unit tests hand them a
// recording fake (testing/recording-exec.ts) and only the composition root spawns processes.

import { spawn } from 'node:child_process';

export interface ExecRequest {
  /** Program name or path, e.g. `iptables-restore`. */
  readonly command: string;
  readonly args: readonly string[];
  /** Written to stdin, which is then closed. Absent: stdin is closed at once. */
  readonly input?: string;
}

export interface ExecResult {
  /** Exit status. 127: the program could not be started; 137: killed (e.g. on timeout). */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one command to completion. Never rejects for a failing command: look at `code`. */
export type Exec = (req: ExecRequest) => Promise<ExecResult>;

export interface SpawnExecOptions {
  /** Kill a command still running after this long. Defaults to 120_000 ms (a 10k-service restore takes ~8 s). */
  readonly timeoutMs?: number;
}

/** The command line as one string, for logs and error messages. */
export function formatCommand(req: Pick<ExecRequest, 'command' | 'args'>): string {
  return [req.command, ...req.args].map((a) => (/^[A-Za-z0-9_./:=@,+-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

/**
 * An Exec that spawns real processes (no shell). A program that cannot be started gives code
 * 127 with the reason in stderr; a timed-out or signalled one gives 137.
 */
export function spawnExec(opts: SpawnExecOptions = {}): Exec {
  const timeout = opts.timeoutMs ?? 120_000;
  return (req) =>
    new Promise<ExecResult>((resolve) => {
      const child = spawn(req.command, [...req.args], { stdio: ['pipe', 'pipe', 'pipe'], timeout, killSignal: 'SIGKILL' });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let startError = null as Error | null;
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.on('error', (e) => {
        startError = e;
      });
      // EPIPE when the program exits without reading its input; the exit code tells the story.
      child.stdin.on('error', () => {});
      child.on('close', (code, signal) => {
        const stderr = Buffer.concat(err).toString('utf8');
        const stdout = Buffer.concat(out).toString('utf8');
        // A program that never started still emits 'close' (with a negative errno as code).
        if (startError !== null) resolve({ code: 127, stdout, stderr: `${stderr}${startError.message}\n` });
        else resolve({ code: code ?? (signal ? 137 : 1), stdout, stderr });
      });
      child.stdin.end(req.input ?? '');
    });
}

/**
 * Runs every command inside network namespace `netns` (`ip netns exec NS cmd ...`). An empty
 * or absent name returns `exec` itself (the agent's own namespace).
 */
export function netnsExec(exec: Exec, netns: string | undefined): Exec {
  if (netns === undefined || netns === '') return exec;
  return (req) => exec({ ...req, command: 'ip', args: ['netns', 'exec', netns, req.command, ...req.args] });
}
