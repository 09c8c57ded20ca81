// Entry point (bin/slicemesh.js): wires the process to `run` and sets the exit code.

import { run } from './run.ts';

// `slicemesh plan | head` closes stdout early; that is not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

process.exitCode = await run(process.argv.slice(2), {
  stdin: process.stdin,
  stdinIsTTY: process.stdin.isTTY === true,
  stdout: process.stdout,
  stderr: process.stderr,
  debug: process.env['SLICEMESH_DEBUG'] === '1',
});
