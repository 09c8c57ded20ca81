// The rule index (scripts/rule-index.ts): docs/rules.md documents every rule id the code cites,
// with the files that cite it; and the checker notices when it does not.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  REPO_ROOT,
  RULES_DOC,
  checkRuleIndex,
  citationsInSource,
  collectCitations,
  parseRulesDoc,
  repositoryCitations,
  writeCitedIn,
} from '../../scripts/rule-index.ts';
import type { Citations, Problem } from '../../scripts/rule-index.ts';

const freeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) freeze(v);
    Object.freeze(value);
  }
  return value;
};

/** A small rules document: a heading, prose, then the generated block per id. */
function doc(...sections: readonly (readonly [id: string, files: readonly string[] | null])[]): string {
  const parts = ['# Rules', '', '## A. Area', ''];
  for (const [id, files] of sections) {
    parts.push(`### ${id}`, '', `Prose about ${id}.`, '');
    if (files !== null) parts.push(...(files.length === 0 ? ['Not cited in code.'] : ['Cited in:', ...files.map((f) => `- \`${f}\``)]), '');
  }
  return parts.join('\n');
}

const citations = (entries: Record<string, readonly string[]>): Citations => freeze(new Map(Object.entries(entries)));
const summary = (problems: readonly Problem[]): string[] => problems.map((p) => `${p.kind} ${p.id}${p.file ? ` ${p.file}` : ''}`);

describe('docs/rules.md documents every rule id cited in the repository', () => {
  // Parses every .ts file of the repository (about 3 s of CPU): room for a loaded machine.
  it('has a section for every cited id, listing exactly the files that cite it (else run scripts/rule-index.ts --write)', { timeout: 30_000 }, () => {
    const markdown = readFileSync(join(REPO_ROOT, RULES_DOC), 'utf8');
    const problems = checkRuleIndex(repositoryCitations(REPO_ROOT), markdown);
    expect(problems.map((p) => p.message)).toEqual([]);
  });

  it('gives every documented id exactly one section', () => {
    const ids = parseRulesDoc(readFileSync(join(REPO_ROOT, RULES_DOC), 'utf8')).map((s) => s.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('the rule-index check reports what docs/rules.md gets wrong', () => {
  const cases: readonly { name: string; cited: Record<string, readonly string[]>; markdown: string; problems: readonly string[] }[] = [
    {
      name: 'a document matching the citations passes',
      cited: { 'A.3.4': ['libs/a.ts', 'services/b.ts'], 'C.4': ['libs/c.ts'] },
      markdown: doc(['A.3.4', ['libs/a.ts', 'services/b.ts']], ['B.1', []], ['C.4', ['libs/c.ts']]),
      problems: [],
    },
    {
      name: 'a cited id without a heading is reported once per citing file',
      cited: { 'A.3.4': ['libs/a.ts'], 'B.2.5': ['libs/m.ts', 'test/x.test.ts'] },
      markdown: doc(['A.3.4', ['libs/a.ts']]),
      problems: ['missing-heading B.2.5 libs/m.ts', 'missing-heading B.2.5 test/x.test.ts'],
    },
    {
      name: 'a citing file missing from the list is reported (e.g. a file moved here)',
      cited: { 'A.12.2': ['libs/core/src/affected.ts', 'services/slicer/src/ingest.ts'] },
      markdown: doc(['A.12.2', ['services/slicer/src/ingest.ts']]),
      problems: ['unlisted-file A.12.2 libs/core/src/affected.ts'],
    },
    {
      name: 'a listed file that no longer cites the id is reported (e.g. a file moved away)',
      cited: { 'A.12.2': ['libs/core/src/affected.ts'] },
      markdown: doc(['A.12.2', ['libs/core/src/affected.ts', 'services/slicer/src/affected.ts']]),
      problems: ['stale-file A.12.2 services/slicer/src/affected.ts'],
    },
    {
      name: '"Not cited in code." under an id the code now cites is stale',
      cited: { 'F.11': ['libs/p.test.ts'] },
      markdown: doc(['F.11', []]),
      problems: ['unlisted-file F.11 libs/p.test.ts'],
    },
    {
      name: 'a list under an id nobody cites any more is stale',
      cited: {},
      markdown: doc(['D.7', ['libs/gone.ts']]),
      problems: ['stale-file D.7 libs/gone.ts'],
    },
    {
      name: 'a section without a list or "Not cited in code." is reported',
      cited: {},
      markdown: doc(['A.1', null]),
      problems: ['missing-list A.1'],
    },
    {
      name: 'a heading that appears twice is reported',
      cited: { 'A.1': ['libs/a.ts'] },
      markdown: doc(['A.1', ['libs/a.ts']], ['A.1', ['libs/a.ts']]),
      problems: ['duplicate-heading A.1'],
    },
    {
      name: 'a heading inside a code block is not a section',
      cited: { 'A.1': ['libs/a.ts'] },
      markdown: ['```md', '### A.1', 'Cited in:', '- `libs/a.ts`', '```', ''].join('\n'),
      problems: ['missing-heading A.1 libs/a.ts'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(summary(checkRuleIndex(citations(tc.cited), tc.markdown))).toEqual(tc.problems);
    });
  }

  it('names the id and the file in its messages', () => {
    const [problem] = checkRuleIndex(citations({ 'B.2.5': ['libs/m.ts'] }), doc(), 'docs/rules.md');
    expect(problem?.message).toContain('B.2.5');
    expect(problem?.message).toContain('libs/m.ts');
    expect(problem?.message).toContain('docs/rules.md');
  });
});

describe('rule-index --write regenerates only the "Cited in" lists', () => {
  const cases: readonly { name: string; cited: Record<string, readonly string[]>; markdown: string }[] = [
    { name: 'a stale list is replaced', cited: { 'A.1': ['libs/new.ts'] }, markdown: doc(['A.1', ['libs/old.ts']]) },
    { name: '"Not cited in code." becomes a list', cited: { 'A.1': ['libs/a.ts', 'libs/b.ts'] }, markdown: doc(['A.1', []]) },
    { name: 'a list becomes "Not cited in code."', cited: {}, markdown: doc(['A.1', ['libs/a.ts']]) },
    { name: 'a section without a block gets one', cited: { 'A.1': ['libs/a.ts'] }, markdown: doc(['A.1', null], ['A.2', []]) },
    { name: 'a list after a blank line is replaced, not duplicated', cited: { 'A.1': ['libs/a.ts'] }, markdown: '### A.1\n\nProse.\n\nCited in:\n\n- `libs/old.ts`\n' },
  ];
  for (const tc of cases) {
    it(`${tc.name}; prose stays, the check then passes, and a second write changes nothing`, () => {
      const cited = citations(tc.cited);
      const written = writeCitedIn(cited, tc.markdown);
      expect(checkRuleIndex(cited, written)).toEqual([]);
      expect(writeCitedIn(cited, written)).toBe(written);
      const prose = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('Prose') || l.startsWith('#'));
      expect(prose(written)).toEqual(prose(tc.markdown));
    });
  }

  it('does not invent a section for an id without a heading', () => {
    const cited = citations({ 'A.1': ['libs/a.ts'], 'A.2': ['libs/b.ts'] });
    const written = writeCitedIn(cited, doc(['A.1', []]));
    expect(summary(checkRuleIndex(cited, written))).toEqual(['missing-heading A.2 libs/b.ts']);
  });
});

describe('rule ids are read from comments and strings only', () => {
  const cases: readonly { name: string; source: string; ids: readonly string[] }[] = [
    { name: 'line and block comments', source: '// Pods on unknown nodes (A.3.4).\n/* see C.4 and B.2.5 */\nconst x = 1;', ids: ['A.3.4', 'B.2.5', 'C.4'] },
    { name: 'JSDoc and a comment before a closing brace', source: '/** Batching (A.12.2). */\nfunction f() {\n  // D.4.12\n}\n', ids: ['A.12.2', 'D.4.12'] },
    { name: 'test names and template strings', source: "it('A.7.3 leftovers', () => {});\nconst t = `C.3.1 ${1} D.2.2/D.2.8`;", ids: ['A.7.3', 'C.3.1', 'D.2.2', 'D.2.8'] },
    { name: 'a range cites its two ends', source: '// A.7.1-A.7.3 and A.1–A.10', ids: ['A.1', 'A.7.1', 'A.7.3', 'A.10'] },
    { name: 'a comment at the very end of the file', source: 'export {};\n// F.11', ids: ['F.11'] },
    { name: 'IP addresses and version numbers are not ids', source: "const ip = '10.180.0.1'; // nats-server 2.9.10, kubectl v1.32.0, 1.2.3", ids: [] },
    { name: 'ids glued to words, dots or more numbers are not ids', source: "const s = 'kube.A.1 RFC.1 =3E.12 A.1.2.3 A.3.4x xA.3.4 A.0';", ids: [] },
    { name: 'letters beyond F are not section letters', source: '// G.1 Z.2.3', ids: [] },
    { name: 'ids in regular expressions (code, not text) are ignored', source: "const r = /A.3.4/;\nconst y = r.source + 'x';", ids: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(citationsInSource(tc.source)).toEqual(tc.ids);
    });
  }

  it('collects citations per id, files sorted', () => {
    const sources = freeze(new Map([['libs/b.ts', '// A.1 C.4'], ['libs/a.ts', '// C.4'], ['libs/c.ts', 'const x = 1;']]));
    expect([...collectCitations(sources)]).toEqual([
      ['A.1', ['libs/b.ts']],
      ['C.4', ['libs/a.ts', 'libs/b.ts']],
    ]);
  });
});
