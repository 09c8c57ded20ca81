import { describe, expect, it } from 'vitest';
import { FakeIptables } from './fake-iptables.ts';

function run(fake: FakeIptables, command: string, args: string[], input?: string) {
  const r = fake.handle({ command, args, ...(input !== undefined ? { input } : {}) });
  if (!r) throw new Error(`${command} not handled`);
  return r;
}

describe('FakeIptables', () => {
  const script = '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-A - [0:0]\n-A KUBE-SERVICES -m comment --comment "a b" -j KUBE-SVC-A\nCOMMIT\n';

  it('restores with --noflush, keeping the script for later assertions', () => {
    const fake = new FakeIptables();
    expect(run(fake, 'iptables-restore', ['--noflush', '-w'], script).code).toBe(0);
    expect(fake.userChains('nat')).toEqual(['KUBE-SERVICES', 'KUBE-SVC-A']);
    expect(fake.rules('nat', 'KUBE-SERVICES')).toEqual(['-m comment --comment a b -j KUBE-SVC-A']);
    expect(fake.restores).toEqual([script]);
  });

  const failures: { name: string; command: string; args: string[]; input?: string; code: number; stderr: RegExp }[] = [
    { name: 'a restore naming an unknown target fails at that line (kernel: "line N failed")', command: 'iptables-restore', args: ['--noflush'], input: '*nat\n:KUBE-X - [0:0]\n-A KUBE-X -j KUBE-NOPE\nCOMMIT\n', code: 1, stderr: /^iptables-restore: line 3 failed/ },
    { name: 'a restore using a match module the kernel lacks fails at that line, as nf_tables reports it', command: 'iptables-restore', args: ['--noflush'], input: '*nat\n:KUBE-X - [0:0]\n-A KUBE-X -m nosuchmatch -j ACCEPT\nCOMMIT\n', code: 2, stderr: /Couldn't load match `nosuchmatch'[^]*Error occurred at line: 3/ },
    { name: 'a restore without --noflush is not modelled (refused, never silently flushing)', command: 'iptables-restore', args: [], input: '*nat\nCOMMIT\n', code: 2, stderr: /only --noflush/ },
    { name: '-C on a rule that is absent exits 1', command: 'iptables', args: ['-t', 'nat', '-C', 'OUTPUT', '-j', 'ACCEPT'], code: 1, stderr: /Bad rule/ },
    { name: '-C naming a chain that does not exist exits 2', command: 'iptables', args: ['-w', '-t', 'nat', '-C', 'OUTPUT', '-j', 'KUBE-SERVICES'], code: 2, stderr: /Chain 'KUBE-SERVICES' does not exist/ },
  ];
  for (const tc of failures) {
    it(tc.name, () => {
      const fake = new FakeIptables();
      const r = run(fake, tc.command, tc.args, tc.input);
      expect(r.code).toBe(tc.code);
      expect(r.stderr).toMatch(tc.stderr);
      expect(fake.userChains('nat')).toEqual([]);
    });
  }

  it('-I inserts at the given position, -C then finds it, -D removes it', () => {
    const fake = new FakeIptables();
    run(fake, 'iptables-restore', ['--noflush'], script);
    const rule = ['-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'];
    expect(run(fake, 'iptables', ['-t', 'nat', '-I', 'OUTPUT', '1', ...rule]).code).toBe(0);
    expect(run(fake, 'iptables', ['-t', 'nat', '-I', 'OUTPUT', '1', '-j', 'ACCEPT']).code).toBe(0);
    expect(fake.rules('nat', 'OUTPUT')).toEqual(['-j ACCEPT', '-m comment --comment kubernetes service portals -j KUBE-SERVICES']);
    expect(run(fake, 'iptables', ['-t', 'nat', '-C', 'OUTPUT', ...rule]).code).toBe(0);
    expect(run(fake, 'iptables', ['-t', 'nat', '-D', 'OUTPUT', ...rule]).code).toBe(0);
    expect(run(fake, 'iptables', ['-t', 'nat', '-C', 'OUTPUT', ...rule]).code).toBe(1);
  });

  it('iptables-save lists user chains with policy "-" and built-ins with theirs, rules re-quoted', () => {
    const fake = new FakeIptables();
    run(fake, 'iptables-restore', ['--noflush'], script);
    const out = run(fake, 'iptables-save', ['-t', 'nat']).stdout.split('\n');
    expect(out).toContain(':PREROUTING ACCEPT [0:0]');
    expect(out).toContain(':KUBE-SVC-A - [0:0]');
    expect(out).toContain('-A KUBE-SERVICES -m comment --comment "a b" -j KUBE-SVC-A');
    expect(out.filter((l) => l.startsWith('*'))).toEqual(['*nat']);
  });

  it('answers only its own family', () => {
    const v6 = new FakeIptables({ family: 'IPv6' });
    expect(v6.handle({ command: 'iptables-restore', args: ['--noflush'] })).toBeUndefined();
    expect(v6.handle({ command: 'ip6tables-restore', args: ['--noflush'], input: '*filter\nCOMMIT\n' })?.code).toBe(0);
  });
});
