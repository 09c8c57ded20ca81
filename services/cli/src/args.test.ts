import { describe, expect, it } from 'vitest';
import { parseCommandLine } from './args.ts';
import { UsageError } from './cli-error.ts';

describe('parseCommandLine accepts', () => {
  const cases: { name: string; argv: string[]; want: object }[] = [
    { name: 'a bare command', argv: ['plan'], want: { command: 'plan', help: false, file: undefined, flags: {} } },
    { name: '-f FILE after the command', argv: ['hints', '-f', 'x.json'], want: { command: 'hints', file: 'x.json' } },
    { name: '--file=FILE before the command', argv: ['--file=x.json', 'plan'], want: { command: 'plan', file: 'x.json' } },
    { name: 'plan flags', argv: ['plan', '--max-endpoints-per-slice', '50', '--managed-by', 'me', '--output=changes'], want: { flags: { 'max-endpoints-per-slice': '50', 'managed-by': 'me', output: 'changes' } } },
    { name: 'proxy-plan flags', argv: ['proxy-plan', '--node', 'n1', '--format', 'nftables', '--ip-family', 'IPv6'], want: { command: 'proxy-plan', flags: { node: 'n1', format: 'nftables', 'ip-family': 'IPv6' } } },
    { name: '--help alone', argv: ['--help'], want: { command: null, help: true } },
    { name: '-h with a command', argv: ['proxy-plan', '-h'], want: { command: 'proxy-plan', help: true } },
    { name: 'the last of a repeated flag wins', argv: ['plan', '--output', 'slices', '--output', 'changes'], want: { flags: { output: 'changes' } } },
    { name: '"-" as the file means stdin (read-input decides)', argv: ['plan', '-f', '-'], want: { file: '-' } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(parseCommandLine(tc.argv)).toMatchObject(tc.want);
    });
  }
});

describe('parseCommandLine rejects with one line', () => {
  const cases: { name: string; argv: string[]; message: RegExp }[] = [
    { name: 'no command', argv: [], message: /^missing command/ },
    { name: 'an unknown command', argv: ['apply'], message: /^unknown command "apply"/ },
    { name: 'an unknown flag', argv: ['plan', '--bogus'], message: /^unknown flag --bogus$/ },
    { name: 'an unknown short flag', argv: ['plan', '-x'], message: /^unknown flag -x$/ },
    { name: 'a flag of another command', argv: ['plan', '--node', 'n1'], message: /^flag --node does not apply to plan$/ },
    { name: 'plan flags on hints', argv: ['hints', '--output', 'changes'], message: /does not apply to hints/ },
    { name: 'a missing value', argv: ['proxy-plan', '--node'], message: /^flag --node needs a value$/ },
    { name: 'a value that looks like a flag', argv: ['plan', '--max-endpoints-per-slice', '-5'], message: /needs a value \(write --max-endpoints-per-slice=VALUE/ },
    { name: 'a value on a boolean flag', argv: ['plan', '--help=yes'], message: /^flag --help takes no value$/ },
    { name: 'an extra argument', argv: ['plan', 'cluster.json'], message: /^unexpected argument "cluster.json"/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      let err: unknown;
      try {
        parseCommandLine(tc.argv);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toMatch(tc.message);
      expect((err as Error).message).not.toContain('\n');
    });
  }
});
