import { describe, expect, it } from 'vitest';
import { ApplyError, applyError, extractLines, nftErrorLine, restoreErrorLine } from './apply-error.ts';

describe('restoreErrorLine', () => {
  const cases: { name: string; stderr: string; want: number | null }[] = [
    { name: 'legacy and commit-time errors: "line N failed"', stderr: 'iptables-restore: line 7 failed: No chain/target/match by that name.\n', want: 7 },
    {
      name: 'nf_tables parse errors: "Error occurred at line: N"',
      stderr: "iptables-restore v1.8.9 (nf_tables): Couldn't load match `foo':No such file or directory\n\nError occurred at line: 4\nTry `iptables-restore -h'\n",
      want: 4,
    },
    { name: 'no line named', stderr: 'iptables-restore: unable to initialize table nat\n', want: null },
    { name: 'empty stderr', stderr: '', want: null },
  ];
  for (const tc of cases) it(tc.name, () => expect(restoreErrorLine(tc.stderr)).toBe(tc.want));
});

describe('nftErrorLine', () => {
  const cases: { name: string; stderr: string; want: number | null }[] = [
    { name: 'nft names stdin line and columns', stderr: '/dev/stdin:3:17-19: Error: No symbol type information\nadd rule ip t c foo bar\n', want: 3 },
    { name: 'the first error wins', stderr: '/dev/stdin:9:1-3: Error: a\n/dev/stdin:12:1-3: Error: b\n', want: 9 },
    { name: 'no location', stderr: 'Error: Could not process rule: Operation not permitted\n', want: null },
  ];
  for (const tc of cases) it(tc.name, () => expect(nftErrorLine(tc.stderr)).toBe(tc.want));
});

describe('extractLines', () => {
  const script = ['l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9'].join('\n');
  const cases: { name: string; line: number; want: number[] }[] = [
    { name: 'three lines either side of the failing one', line: 5, want: [2, 3, 4, 5, 6, 7, 8] },
    { name: 'clipped at the start', line: 1, want: [1, 2, 3, 4] },
    { name: 'clipped at the end', line: 9, want: [6, 7, 8, 9] },
    { name: 'a line past the end gives what exists near it', line: 11, want: [8, 9] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = extractLines(script, tc.line);
      expect(got.map((l) => l.n)).toEqual(tc.want);
      expect(got.every((l) => l.text === `l${l.n}`)).toBe(true);
    });
  }
});

describe('ApplyError', () => {
  it('names tool, exit code, line and the first stderr line, and marks the failing line', () => {
    const e = applyError('iptables-restore', { code: 1, stdout: '', stderr: '\niptables-restore: line 3 failed\n' }, 'a\nb\nc\nd', restoreErrorLine);
    expect(e).toBeInstanceOf(ApplyError);
    expect(e.message).toBe('iptables-restore failed (exit 1) at line 3: iptables-restore: line 3 failed');
    expect(e.line).toBe(3);
    expect(e.excerptText()).toBe(['      1  a', '      2  b', '>     3  c', '      4  d'].join('\n'));
  });
  it('without a line there is no excerpt', () => {
    const e = applyError('nft', { code: 1, stdout: '', stderr: 'Error: x\n' }, 'a', nftErrorLine);
    expect([e.line, e.excerpt, e.excerptText()]).toEqual([null, [], '']);
  });
});
