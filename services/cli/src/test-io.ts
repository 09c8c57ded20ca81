// Test helper: runs the CLI in-process with string streams.

import type { CliIO } from './run.ts';
import { run } from './run.ts';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `slicemesh argv` with `stdin` text; `files` stand in for the file system. */
export async function runCli(argv: readonly string[], stdin = '', files: Readonly<Record<string, string>> = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdin,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    readFile: async (path: string) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return text;
    },
  };
  const code = await run(argv, io);
  return { code, stdout, stderr };
}
