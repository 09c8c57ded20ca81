// What a failed apply reports: the tool, its exit code and output, and — when the tool named
// a line of the script — that line with its neighbours, so the log shows the offending rule
// (habit 7, upstream's "log the lines around the failing one").

import type { ExecResult } from './exec.ts';

/** One script line quoted in an error: its 1-based number and text. */
export interface ScriptLine {
  readonly n: number;
  readonly text: string;
}

/** A command that changes the data plane failed. Nothing about the failure is hidden in the message. */
export class ApplyError extends Error {
  /** e.g. `iptables-restore`, `nft`, `ipvsadm`, `ip`. */
  readonly tool: string;
  readonly code: number;
  readonly stderr: string;
  /** The failing line of the script the tool named, or null when it named none. */
  readonly line: number | null;
  /** That line and up to 3 lines either side; empty without a line. */
  readonly excerpt: readonly ScriptLine[];
  override readonly name = 'ApplyError';
  constructor(
    tool: string,
    code: number,
    stderr: string,
    line: number | null,
    excerpt: readonly ScriptLine[],
  ) {
    const first = stderr.split('\n').find((l) => l.trim() !== '') ?? '';
    super(`${tool} failed (exit ${code})${line !== null ? ` at line ${line}` : ''}: ${first.trim()}`);
    this.tool = tool;
    this.code = code;
    this.stderr = stderr;
    this.line = line;
    this.excerpt = excerpt;
  }

  /** The excerpt as printable text, the failing line marked with '>'. */
  excerptText(): string {
    return this.excerpt.map((l) => `${l.n === this.line ? '>' : ' '} ${String(l.n).padStart(5)}  ${l.text}`).join('\n');
  }
}

/** Lines `line - context` .. `line + context` of `script` (1-based, clipped to the script). */
export function extractLines(script: string, line: number, context = 3): ScriptLine[] {
  const lines = script.split('\n');
  const out: ScriptLine[] = [];
  for (let n = Math.max(1, line - context); n <= Math.min(lines.length, line + context); n++) out.push({ n, text: lines[n - 1] ?? '' });
  return out;
}

/**
 * The failing line iptables-restore names: `line N failed` (legacy and most errors) or
 * `Error occurred at line: N` (nf_tables backend, parse errors). null when neither appears.
 */
export function restoreErrorLine(stderr: string): number | null {
  const m = /line (\d+) failed/.exec(stderr) ?? /Error occurred at line: (\d+)/.exec(stderr);
  return m?.[1] !== undefined ? Number(m[1]) : null;
}

/** The first line `nft -f -` names: `/dev/stdin:N:cols: Error: ...`. null when none. */
export function nftErrorLine(stderr: string): number | null {
  const m = /^(?:\/dev\/stdin|-):(\d+):/m.exec(stderr);
  return m?.[1] !== undefined ? Number(m[1]) : null;
}

/** An ApplyError for `result`, quoting the lines around the one `lineOf` finds in stderr. */
export function applyError(tool: string, result: ExecResult, script: string, lineOf: (stderr: string) => number | null): ApplyError {
  const line = lineOf(result.stderr);
  return new ApplyError(tool, result.code, result.stderr, line, line === null ? [] : extractLines(script, line));
}
