// spawnExec against real processes.
import { describe, expect, it } from 'vitest';
import { spawnExec } from './exec.ts';

describe('spawnExec', () => {
  const exec = spawnExec({ timeoutMs: 2000 });
  const cases: { name: string; command: string; args: string[]; input?: string; want: { code: number; stdout?: string; stderr?: RegExp } }[] = [
    { name: 'feeds stdin and collects stdout', command: 'cat', args: [], input: 'hello\n', want: { code: 0, stdout: 'hello\n' } },
    { name: 'reports the exit code and stderr of a failing command', command: 'sh', args: ['-c', 'echo oops >&2; exit 3'], want: { code: 3, stdout: '', stderr: /^oops\n$/ } },
    { name: 'a program that does not exist gives 127 with the reason', command: 'slicemesh-no-such-tool', args: [], want: { code: 127, stderr: /ENOENT/ } },
    { name: 'a program that ignores its stdin still completes', command: 'true', args: [], input: 'x'.repeat(1 << 20), want: { code: 0 } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const r = await exec({ command: tc.command, args: tc.args, ...(tc.input !== undefined ? { input: tc.input } : {}) });
      expect(r.code).toBe(tc.want.code);
      if (tc.want.stdout !== undefined) expect(r.stdout).toBe(tc.want.stdout);
      if (tc.want.stderr !== undefined) expect(r.stderr).toMatch(tc.want.stderr);
    });
  }

  it('kills a command that outlives the timeout (137)', async () => {
    const r = await spawnExec({ timeoutMs: 200 })({ command: 'sleep', args: ['5'] });
    expect(r.code).toBe(137);
  });
});
