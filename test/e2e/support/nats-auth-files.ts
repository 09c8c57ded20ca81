// The keys infra/nats/auth/README.md and infra/k8s/README.md tell an operator to generate, for
// tests that run the configurations of infra/nats or render infra/k8s: their `slicemesh nats-auth`
// lines, run as written but with every --out under a directory of the test's, so the READMEs are
// what the tests prove and the repository's own key directories are neither read nor written.

import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '../../../services/stack/src/index.ts';
import { run } from '../../../services/cli/src/run.ts';

/** A README's distinct `slicemesh nats-auth …` command lines (comments dropped), as argv after `slicemesh`. */
export function natsAuthCommandsOf(readme: string): string[][] {
  const text = readFileSync(join(REPO_ROOT, readme), 'utf8');
  const lines = new Set(text.split('\n').filter((l) => l.startsWith('slicemesh nats-auth ')).map((l) => l.replace(/#.*$/, '').trim()));
  return [...lines].map((l) => l.split(/\s+/).slice(1));
}

/** `argv` with its `--out <repo path>` moved under `root`; the repo path too. */
function outUnder(root: string, argv: readonly string[], readme: string): { argv: string[]; out: string } {
  const i = argv.indexOf('--out');
  const out = argv[i + 1];
  if (i < 0 || out === undefined) throw new Error(`${readme}: slicemesh ${argv.join(' ')} has no --out`);
  return { argv: [...argv.slice(0, i + 1), join(root, out), ...argv.slice(i + 2)], out };
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
  for (const command of natsAuthCommandsOf('infra/nats/auth/README.md')) {
    const { argv, out } = outUnder(root, command, 'infra/nats/auth/README.md');
    await runSlicemesh(argv);
    dirs.push(join(root, out));
  }
  return dirs;
}

/**
 * Copies infra/k8s to `<root>/infra/k8s`, without the repository's keys, and generates the keys
 * there with the one command infra/k8s/README.md gives; returns `root` (kustomize `<root>/<dir>`).
 */
export async function copyInfraK8sWithKeys(root: string): Promise<string> {
  const commands = natsAuthCommandsOf('infra/k8s/README.md');
  if (commands.length !== 1) throw new Error(`infra/k8s/README.md: expected one slicemesh nats-auth command, found ${commands.length}`);
  const { argv, out } = outUnder(root, commands[0] as string[], 'infra/k8s/README.md');
  mkdirSync(join(root, 'infra'), { recursive: true });
  cpSync(join(REPO_ROOT, 'infra/k8s'), join(root, 'infra/k8s'), { recursive: true, filter: (src) => dirname(src) !== join(REPO_ROOT, out) });
  await runSlicemesh(argv);
  return root;
}
