// A fake `conntrack`: a table of entries the test inserts, deleted by `conntrack -D` with the
// filters the adapter uses (-p, --orig-dst, --orig-port-dst, --reply-src, -f), answering as
// conntrack-tools 1.4 does (the count on stderr; exit 1 when nothing matched). `-L` lists in
// the tool's format and `--version` answers, so the fake can stand in for the tool in unit
// tests; conntrack.int.test.ts runs the same sequence against the kernel.

import type { ExecRequest, ExecResult } from '../src/exec.ts';
import type { ExecHandler } from './recording-exec.ts';

/** One tracked flow: the original tuple, and the reply tuple after NAT. */
export interface FakeConntrackEntry {
  readonly family: 'IPv4' | 'IPv6';
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly orig: { readonly src: string; readonly dst: string; readonly sport: number; readonly dport: number };
  readonly reply: { readonly src: string; readonly dst: string; readonly sport: number; readonly dport: number };
}

const TOOL = 'conntrack v1.4.7 (conntrack-tools)';
const PROTO_NUMBERS: Readonly<Record<FakeConntrackEntry['protocol'], number>> = { TCP: 6, UDP: 17, SCTP: 132 };

/** `conntrack -I` arguments that create `e` in a real kernel (for tests that compare); the family follows the addresses. */
export function conntrackInsertArgs(e: FakeConntrackEntry): string[] {
  return [
    '-I', '-p', e.protocol.toLowerCase(),
    '-s', e.orig.src, '-d', e.orig.dst, '--sport', String(e.orig.sport), '--dport', String(e.orig.dport),
    '-r', e.reply.src, '-q', e.reply.dst, '--reply-port-src', String(e.reply.sport), '--reply-port-dst', String(e.reply.dport),
    '-t', '120',
  ];
}

export class FakeConntrack implements ExecHandler {
  readonly #entries: FakeConntrackEntry[] = [];

  /** Adds flows, as traffic would. */
  insert(...entries: readonly FakeConntrackEntry[]): void {
    this.#entries.push(...entries);
  }

  /** The flows left, in insertion order. */
  entries(): readonly FakeConntrackEntry[] {
    return [...this.#entries];
  }

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command !== 'conntrack') return undefined;
    const a = req.args;
    if (a[0] === '--version') return { code: 0, stdout: `${TOOL}\n`, stderr: '' };
    const value = (...flags: string[]): string | undefined => {
      for (const f of flags) {
        const i = a.indexOf(f);
        if (i >= 0) return a[i + 1];
      }
      return undefined;
    };
    const family = value('-f') === 'ipv6' ? 'IPv6' : 'IPv4';
    const proto = value('-p')?.toUpperCase();
    const origDst = value('--orig-dst', '-d');
    const origPort = value('--orig-port-dst', '--dport');
    const replySrc = value('--reply-src', '-r');
    const matches = (e: FakeConntrackEntry) =>
      e.family === family &&
      (proto === undefined || e.protocol === proto) &&
      (origDst === undefined || e.orig.dst === origDst) &&
      (origPort === undefined || String(e.orig.dport) === origPort) &&
      (replySrc === undefined || e.reply.src === replySrc);
    if (a[0] === '-L') {
      const shown = this.#entries.filter(matches);
      const lines = shown.map((e) => {
        const p = e.protocol.toLowerCase();
        return `${p.padEnd(8)} ${PROTO_NUMBERS[e.protocol]} 119 src=${e.orig.src} dst=${e.orig.dst} sport=${e.orig.sport} dport=${e.orig.dport} src=${e.reply.src} dst=${e.reply.dst} sport=${e.reply.sport} dport=${e.reply.dport} mark=0 use=1\n`;
      });
      return { code: 0, stdout: lines.join(''), stderr: `${TOOL}: ${shown.length} flow entries have been shown.\n` };
    }
    if (a[0] === '-D') {
      let n = 0;
      for (let i = this.#entries.length - 1; i >= 0; i--) {
        const e = this.#entries[i];
        if (e !== undefined && matches(e)) {
          this.#entries.splice(i, 1);
          n++;
        }
      }
      return { code: n > 0 ? 0 : 1, stdout: '', stderr: `${TOOL}: ${n} flow entries have been deleted.\n` };
    }
    return { code: 2, stdout: '', stderr: `${TOOL}: fake: ${a[0] ?? ''} is not modelled\n` };
  }
}
