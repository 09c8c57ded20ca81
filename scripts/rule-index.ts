// The rule index: which files cite which upstream-behaviour rule (ids such as A.3.4, B.2.5,
// C.4, D.4.12, F.11, documented in docs/rules.md), and whether docs/rules.md says so.
//
//   node scripts/rule-index.ts           prints every cited id with its files
//   node scripts/rule-index.ts --check   exit 1 unless docs/rules.md matches the code
//   node scripts/rule-index.ts --write   rewrites only the "Cited in" lists of docs/rules.md
//
// A citation is an id in a comment or a string literal (test names count) of a .ts file under
// libs/, services/, test/ or bench/. Ids have the shape <letter>.<section>[.<item>] with the
// letters A–F of the semantics sections, numbers 1–99, and nothing word-like or numeric glued
// to either end: IP addresses (10.0.0.1), versions (1.2.3, v1.33), subjects (kube.A.1) and
// longer dotted numbers (A.1.2.3) are never ids, and ids in code (not comments or strings) are
// ignored. A range such as "A.7.1-A.7.3" cites its two ends only.
//
// docs/rules.md layout the checker relies on (prose in between is free):
//
//   ### A.3.4            one heading per id, nothing else on the line (stable anchor #a34)
//   <prose>
//   Cited in:            followed by one "- `path`" line per citing file, sorted
//   - `libs/...`
//   or
//   Not cited in code.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** Folders scanned for citations, relative to the repository root. */
export const SCANNED_DIRS: readonly string[] = ['libs', 'services', 'test', 'bench'];
/** Paths (prefixes) never scanned: the rule index's own tests use made-up ids as data. */
export const EXCLUDED_PREFIXES: readonly string[] = ['test/docs/'];
/** The index, relative to the repository root. */
export const RULES_DOC = 'docs/rules.md';
/** Problems printed by --check before the rest is only counted. */
const MAX_REPORTED = 50;
/** The command that regenerates the file lists. */
export const WRITE_COMMAND = 'node scripts/rule-index.ts --write';

const ID = String.raw`[A-F]\.[1-9][0-9]?(?:\.[1-9][0-9]?)?`;
/** An id inside free text (comment or string), not glued to a word, a dot or more digits. */
const ID_IN_TEXT = new RegExp(String.raw`(?<![\w.])(${ID})(?!\w|\.[0-9])`, 'g');
/** A whole id, e.g. for validating headings. */
export const RULE_ID = new RegExp(`^${ID}$`);
const HEADING = new RegExp(String.raw`^###[ \t]+(${ID})[ \t]*$`);
const ANY_SECTION_HEADING = /^#{1,3}[ \t]/;
const FENCE = /^[ ]{0,3}(?:```|~~~)/;
const CITED_IN = 'Cited in:';
const NOT_CITED = 'Not cited in code.';
const LIST_ITEM = /^- `([^`]+)`[ \t]*$/;

/** Citations: rule id -> sorted repository-relative paths of the files citing it. */
export type Citations = ReadonlyMap<string, readonly string[]>;

/** One thing docs/rules.md gets wrong; `id` and `file` name what to fix. */
export interface Problem {
  readonly kind: 'missing-heading' | 'duplicate-heading' | 'missing-list' | 'unlisted-file' | 'stale-file';
  readonly id: string;
  readonly file?: string;
  readonly message: string;
}

/** Orders ids as people read them: A.2 < A.3.4 < A.10 < B.1. */
export function compareRuleIds(a: string, b: string): number {
  const pa = a.split('.');
  const pb = b.split('.');
  if (pa[0] !== pb[0]) return (pa[0] ?? '') < (pb[0] ?? '') ? -1 : 1;
  for (let i = 1; i < Math.max(pa.length, pb.length); i++) {
    const d = Number(pa[i] ?? 0) - Number(pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function idsInText(text: string, into: Set<string>): void {
  for (const m of text.matchAll(ID_IN_TEXT)) into.add(m[1]!);
}

/** The same id test, once, on raw text. */
const ANY_ID = new RegExp(String.raw`(?<![\w.])${ID}(?!\w|\.[0-9])`);

/**
 * The rule ids cited in the comments and string literals (template parts included) of one
 * TypeScript source, sorted. Pure: parses `text`, reads nothing else. A source whose text holds
 * no id at all is not parsed (most of them): an id spelled with escape sequences is no citation.
 */
export function citationsInSource(text: string, fileName = 'source.ts'): string[] {
  if (!ANY_ID.test(text)) return [];
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const ids = new Set<string>();
  const seenComments = new Set<number>();
  const comment = (pos: number, end: number): void => {
    if (seenComments.has(pos)) return;
    seenComments.add(pos);
    idsInText(text.slice(pos, end), ids);
  };
  const visit = (node: ts.Node): void => {
    // Every comment is leading or trailing trivia of some node or token (getChildren includes
    // tokens, so comments before a closing brace or at the end of the file are reached too).
    ts.forEachLeadingCommentRange(text, node.pos, comment);
    ts.forEachTrailingCommentRange(text, node.end, comment);
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) {
      idsInText(node.text, ids);
    }
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return [...ids].sort(compareRuleIds);
}

/** Folds per-file citations (path -> source text) into id -> sorted paths. Pure. */
export function collectCitations(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const byId = new Map<string, string[]>();
  for (const [path, text] of [...sources].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (const id of citationsInSource(text, path)) {
      const files = byId.get(id) ?? [];
      files.push(path);
      byId.set(id, files);
    }
  }
  return new Map([...byId].sort(([a], [b]) => compareRuleIds(a, b)));
}

/** The "Cited in" part of one section: where it is and what it lists. */
interface CitedBlock {
  /** Line range [start, end) of the block within the document. */
  readonly start: number;
  readonly end: number;
  /** Listed files; empty for "Not cited in code.". */
  readonly files: readonly string[];
}

/** One `### <id>` section of the document. */
export interface RuleSection {
  readonly id: string;
  /** Line of the heading. */
  readonly line: number;
  /** First line after the section. */
  readonly end: number;
  readonly block: CitedBlock | null;
}

/** The `### <id>` sections of docs/rules.md, in document order. Pure. */
export function parseRulesDoc(markdown: string): RuleSection[] {
  const lines = markdown.split('\n');
  // Lines inside fenced code blocks are text, never headings.
  const fenced: boolean[] = [];
  let inFence = false;
  for (const line of lines) {
    const fence = FENCE.test(line);
    fenced.push(inFence || fence);
    if (fence) inFence = !inFence;
  }
  const isHeading = (i: number): boolean => !fenced[i] && ANY_SECTION_HEADING.test(lines[i]!);
  const sections: RuleSection[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = fenced[i] ? null : HEADING.exec(lines[i]!);
    if (!m) continue;
    let end = i + 1;
    while (end < lines.length && !isHeading(end)) end++;
    let block: CitedBlock | null = null;
    for (let j = i + 1; j < end && block === null; j++) {
      const line = lines[j]!.trimEnd();
      if (line === NOT_CITED) block = { start: j, end: j + 1, files: [] };
      if (line === CITED_IN) {
        // The list follows at once (blank lines before its first item are tolerated).
        let k = j + 1;
        while (k < end && lines[k]!.trim() === '') k++;
        if (k >= end || !LIST_ITEM.test(lines[k]!)) k = j + 1;
        const files: string[] = [];
        for (let item = LIST_ITEM.exec(lines[k] ?? ''); k < end && item !== null; item = LIST_ITEM.exec(lines[k] ?? '')) {
          files.push(item[1]!);
          k++;
        }
        block = { start: j, end: k, files };
      }
    }
    sections.push({ id: m[1]!, line: i, end, block });
  }
  return sections;
}

/**
 * Compares docs/rules.md with the citations: every cited id needs a `### <id>` heading, every
 * heading one "Cited in" list (or "Not cited in code.") naming exactly the files that cite it.
 * Returns the problems, in id order; [] when the document is current. Pure.
 */
export function checkRuleIndex(citations: Citations, markdown: string, docPath = RULES_DOC): Problem[] {
  const problems: Problem[] = [];
  const sections = new Map<string, RuleSection>();
  for (const s of parseRulesDoc(markdown)) {
    if (sections.has(s.id)) {
      problems.push({ kind: 'duplicate-heading', id: s.id, message: `${docPath}:${s.line + 1}: "### ${s.id}" appears more than once` });
    } else {
      sections.set(s.id, s);
    }
  }
  for (const [id, files] of citations) {
    if (sections.has(id)) continue;
    for (const file of files) {
      problems.push({ kind: 'missing-heading', id, file, message: `${file} cites ${id}, but ${docPath} has no "### ${id}" section: add one explaining the rule` });
    }
  }
  for (const [id, s] of sections) {
    const cited = citations.get(id) ?? [];
    if (s.block === null) {
      problems.push({ kind: 'missing-list', id, message: `${docPath}:${s.line + 1}: "### ${id}" has neither a "${CITED_IN}" list nor "${NOT_CITED}"` });
      continue;
    }
    const listed = new Set(s.block.files);
    const citing = new Set(cited);
    for (const file of cited) {
      if (!listed.has(file)) problems.push({ kind: 'unlisted-file', id, file, message: `${file} cites ${id}, but is not listed under "### ${id}" in ${docPath}` });
    }
    for (const file of s.block.files) {
      if (!citing.has(file)) problems.push({ kind: 'stale-file', id, file, message: `${docPath} lists ${file} under "### ${id}", but that file does not cite ${id} (moved, renamed or changed?)` });
    }
  }
  return problems.sort((a, b) => compareRuleIds(a.id, b.id) || (a.file ?? '').localeCompare(b.file ?? ''));
}

/** The "Cited in" block for `files` (sorted), as lines. */
export function renderCitedIn(files: readonly string[]): string[] {
  return files.length === 0 ? [NOT_CITED] : [CITED_IN, ...files.map((f) => `- \`${f}\``)];
}

/**
 * Rewrites only the "Cited in" blocks of `markdown` from `citations` (a section without a block
 * gets one at its end), keeping every other line. Ids cited but without a heading are not
 * invented; checkRuleIndex on the result still reports them. Pure.
 */
export function writeCitedIn(citations: Citations, markdown: string): string {
  const lines = markdown.split('\n');
  const edits: { start: number; end: number; lines: string[] }[] = [];
  const done = new Set<string>();
  for (const s of parseRulesDoc(markdown)) {
    if (done.has(s.id)) continue;
    done.add(s.id);
    const block = renderCitedIn(citations.get(s.id) ?? []);
    if (s.block !== null) {
      edits.push({ start: s.block.start, end: s.block.end, lines: block });
    } else {
      let at = s.end;
      while (at > s.line + 1 && lines[at - 1]!.trim() === '') at--;
      edits.push({ start: at, end: at, lines: ['', ...block] });
    }
  }
  for (const e of edits.sort((a, b) => b.start - a.start)) lines.splice(e.start, e.end - e.start, ...e.lines);
  return lines.join('\n');
}

/** Repository-relative paths (with `/`) of the scanned .ts files under `root`, sorted. */
export function scannedFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.ts')) out.push(relative(root, full).split(sep).join('/'));
    }
  };
  for (const d of SCANNED_DIRS) {
    try {
      walk(join(root, d));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return out.filter((p) => !EXCLUDED_PREFIXES.some((x) => p.startsWith(x))).sort();
}

/** Reads the scanned files of the repository at `root` and returns their citations. */
export function repositoryCitations(root: string): Map<string, string[]> {
  return collectCitations(new Map(scannedFiles(root).map((p) => [p, readFileSync(join(root, p), 'utf8')])));
}

/** The repository root (this file lives in scripts/). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

function main(argv: readonly string[]): number {
  const mode = argv.includes('--write') ? 'write' : argv.includes('--check') ? 'check' : 'print';
  const unknown = argv.filter((a) => a !== '--write' && a !== '--check');
  if (unknown.length > 0 || (argv.includes('--write') && argv.includes('--check'))) {
    process.stderr.write(`usage: node scripts/rule-index.ts [--check | --write]\n`);
    return 2;
  }
  const citations = repositoryCitations(REPO_ROOT);
  if (mode === 'print') {
    for (const [id, files] of citations) process.stdout.write(`${id}\n${files.map((f) => `  ${f}\n`).join('')}`);
    process.stdout.write(`${citations.size} rule ids cited\n`);
    return 0;
  }
  const docFile = join(REPO_ROOT, RULES_DOC);
  let markdown = readFileSync(docFile, 'utf8');
  if (mode === 'write') {
    const updated = writeCitedIn(citations, markdown);
    if (updated !== markdown) writeFileSync(docFile, updated);
    process.stdout.write(updated !== markdown ? `${RULES_DOC}: "Cited in" lists rewritten\n` : `${RULES_DOC}: already current\n`);
    markdown = updated;
  }
  const problems = checkRuleIndex(citations, markdown);
  const documented = parseRulesDoc(markdown).length;
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED);
    const more = problems.length - shown.length;
    process.stderr.write(`rule index: ${problems.length} problem(s)\n${shown.map((p) => `  ${p.message}\n`).join('')}${more > 0 ? `  … and ${more} more\n` : ''}`);
    if (problems.some((p) => p.kind === 'unlisted-file' || p.kind === 'stale-file' || p.kind === 'missing-list')) {
      process.stderr.write(`File lists are regenerated by: ${WRITE_COMMAND}\n`);
    }
    if (problems.some((p) => p.kind === 'missing-heading')) {
      process.stderr.write(`A new id needs a "### <id>" section with its explanation in ${RULES_DOC}; --write does not invent one.\n`);
    }
    return 1;
  }
  process.stdout.write(`rule index OK: ${citations.size} rule ids cited, ${documented} documented in ${RULES_DOC}\n`);
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2));
}
