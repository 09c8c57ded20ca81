// The keys infra/nats/auth/README.md tells an operator to generate, for tests that run the
// configurations of infra/nats: its `slicemesh nats-auth` lines, run as written but with every
// --out under a directory of the test's, so the README is what the tests prove.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../services/stack/src/index.ts';
import { run } from '../../../services/cli/src/run.ts';

/** The README's `slicemesh nats-auth …` command lines, as argv after `slicemesh`. */
export function infraNatsAuthCommands(): string[][] {
  const readme = readFileSync(join(REPO_ROOT, 'infra/nats/auth/README.md'), 'utf8');
  return readme
    .split('\n')
    .filter((l) => l.startsWith('slicemesh nats-auth '))
    .map((l) => l.trim().split(/\s+/).slice(1));
}

/** Runs `slicemesh argv` in-process; throws with its stderr unless it exits 0. */
export async function runSlicemesh(argv: readonly string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { stdin: '', stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, env: {} });
  if (code !== 0) throw new Error(`slicemesh ${argv.join(' ')} exited ${code}: ${stderr.trim()}`);
  return stdout;
}

/**
 * Runs the README's commands with each `--out <repo path>` moved to `<root>/<repo path>`, so that a
 * copy of infra/nats under `<root>/infra/nats` finds what it includes. Returns the directories written.
 */
export async function writeInfraNatsAuth(root: string): Promise<string[]> {
  const dirs: string[] = [];
  for (const argv of infraNatsAuthCommands()) {
    const i = argv.indexOf('--out');
    if (i < 0 || argv[i + 1] === undefined) throw new Error(`infra/nats/auth/README.md: slicemesh ${argv.join(' ')} has no --out`);
    const out = join(root, argv[i + 1] as string);
    await runSlicemesh([...argv.slice(0, i + 1), out, ...argv.slice(i + 2)]);
    dirs.push(out);
  }
  return dirs;
}
