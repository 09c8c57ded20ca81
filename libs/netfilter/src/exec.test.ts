import { describe, expect, it } from 'vitest';
import type { ExecRequest } from './exec.ts';
import { formatCommand, netnsExec } from './exec.ts';

describe('formatCommand', () => {
  const cases: { name: string; req: Pick<ExecRequest, 'command' | 'args'>; want: string }[] = [
    { name: 'plain words stay bare', req: { command: 'iptables', args: ['-w', '-t', 'nat', '-C', 'OUTPUT'] }, want: 'iptables -w -t nat -C OUTPUT' },
    { name: 'words with blanks or quotes are JSON-quoted', req: { command: 'iptables', args: ['--comment', 'kubernetes service portals'] }, want: 'iptables --comment "kubernetes service portals"' },
    { name: 'bracketed IPv6 addresses are quoted (a shell would glob them)', req: { command: 'ipvsadm', args: ['-a', '-t', '[fd00::1]:80'] }, want: 'ipvsadm -a -t "[fd00::1]:80"' },
  ];
  for (const tc of cases) it(tc.name, () => expect(formatCommand(tc.req)).toBe(tc.want));
});

describe('netnsExec', () => {
  const seen: ExecRequest[] = [];
  const inner = async (req: ExecRequest) => {
    seen.push(req);
    return { code: 0, stdout: '', stderr: '' };
  };
  const cases: { name: string; netns: string | undefined; want: ExecRequest }[] = [
    { name: 'a namespace wraps the command in ip netns exec, keeping stdin', netns: 'node-a', want: { command: 'ip', args: ['netns', 'exec', 'node-a', 'nft', '-f', '-'], input: 'x' } },
    { name: 'no namespace runs the command as is', netns: undefined, want: { command: 'nft', args: ['-f', '-'], input: 'x' } },
    { name: 'an empty namespace name means the current one', netns: '', want: { command: 'nft', args: ['-f', '-'], input: 'x' } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      seen.length = 0;
      await netnsExec(inner, tc.netns)({ command: 'nft', args: ['-f', '-'], input: 'x' });
      expect(seen).toEqual([tc.want]);
    });
  }
});
