import { describe, expect, it } from 'vitest';
import { FakeNft } from './fake-nft.ts';

describe('FakeNft', () => {
  const cases: { name: string; scripts: string[]; codes: number[]; tables: string[]; stderr?: RegExp }[] = [
    { name: 'applies a transaction from stdin', scripts: ['add table ip t\nadd chain ip t c\nadd rule ip t c accept\n'], codes: [0], tables: ['ip t'] },
    {
      name: 'a failing line rejects the whole transaction and is reported as /dev/stdin:LINE',
      scripts: ['add table ip t\nadd chain ip t c\nadd rule ip t c jump nowhere\n'],
      codes: [1],
      tables: [],
      stderr: /^\/dev\/stdin:3:1-\d+: Error: .*unknown chain nowhere/,
    },
    { name: 'add-then-delete removes a table whether or not it existed', scripts: ['add table ip t\n', 'add table ip t\ndelete table ip t\n', 'add table ip t\ndelete table ip t\n'], codes: [0, 0, 0], tables: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const fake = new FakeNft();
      const results = tc.scripts.map((input) => fake.handle({ command: 'nft', args: ['-f', '-'], input }));
      expect(results.map((r) => r?.code)).toEqual(tc.codes);
      expect([...fake.ruleset.keys()]).toEqual(tc.tables);
      if (tc.stderr) expect(results.at(-1)?.stderr).toMatch(tc.stderr);
    });
  }

  it('leaves other programs and other nft invocations alone or refuses them', () => {
    const fake = new FakeNft();
    expect(fake.handle({ command: 'iptables', args: [] })).toBeUndefined();
    expect(fake.handle({ command: 'nft', args: ['list', 'ruleset'] })?.code).toBe(1);
  });
});
