// Follows a packet through iptables rules (read from restore text, never from the renderer's
// structures) the way the kernel walks the built-in chains: nat PREROUTING (or OUTPUT for a
// local process), then filter INPUT / FORWARD (or OUTPUT), then nat POSTROUTING. Random
// matches (`-m statistic`) fork the trace so every reachable endpoint shows up. The packet is
// the first of a connection (ctstate NEW). POSTROUTING runs for every path, so `masquerade`
// reports the SNAT mark's effect even for node-local deliveries.

import { cidrContains } from '../policy.ts';
import type { IptablesTables, SimRule } from './iptables-restore-sim.ts';
import { IPTABLES_TARGETS, applyIptablesRestore, emptyIptables } from './iptables-restore-sim.ts';
import type { TraceOptions, TracePacket, TracePath, TraceResult, TraceVerdict } from './trace-result.ts';
import { summarize } from './trace-result.ts';

interface Path {
  mark: number;
  dnat: string | null;
  verdict: TraceVerdict | null;
  masquerade: boolean;
  affinity: string[];
}

interface Pkt {
  readonly src: string;
  readonly dst: string;
  readonly dport: number;
  readonly proto: string;
}

type Outcome = { readonly path: Path; readonly end: 'fallthrough' | 'return' | 'terminal' };

const MAX_DEPTH = 64;

function clone(p: Path): Path {
  return { ...p, affinity: [...p.affinity] };
}

class Tracer {
  private readonly tables: IptablesTables;
  private readonly opts: TraceOptions;

  constructor(
    tables: IptablesTables,
    opts: TraceOptions,
  ) {
    this.tables = tables;
    this.opts = opts;
  }

  isLocal(ip: string): boolean {
    return this.opts.nodeIPs.includes(ip) || cidrContains('127.0.0.0/8', ip) || ip === '::1';
  }

  runChain(table: string, chain: string, pkt: Pkt, path: Path, depth: number): Outcome[] {
    if (depth > MAX_DEPTH) throw new Error(`jump loop at ${table}/${chain}`);
    const rules = this.tables.get(table)?.get(chain);
    if (!rules) throw new Error(`no chain ${table}/${chain}`);
    return this.runRules(table, rules, 0, pkt, path, depth);
  }

  private runRules(table: string, rules: readonly SimRule[], from: number, pkt: Pkt, path: Path, depth: number): Outcome[] {
    const out: Outcome[] = [];
    for (let i = from; i < rules.length; i++) {
      const rule = rules[i];
      if (!rule) continue;
      const { result: m, records } = this.match(rule.words, pkt, path);
      if (m === 'no') continue;
      if (m === 'fork') out.push(...this.runRules(table, rules, i + 1, pkt, clone(path), depth));
      for (const r of records) path.affinity.push(r);
      const words = rule.words;
      const j = words.indexOf('-j');
      if (j < 0) continue;
      const target = words[j + 1] ?? '';
      const arg = (flag: string): string => words[words.indexOf(flag, j) + 1] ?? '';
      switch (target) {
        case 'RETURN':
          out.push({ path, end: 'return' });
          return out;
        case 'ACCEPT':
        case 'DROP':
        case 'REJECT':
          path.verdict = target;
          out.push({ path, end: 'terminal' });
          return out;
        case 'DNAT':
          path.dnat = arg('--to-destination');
          path.verdict = 'DNAT';
          out.push({ path, end: 'terminal' });
          return out;
        case 'MASQUERADE':
          path.masquerade = true;
          out.push({ path, end: 'terminal' });
          return out;
        case 'MARK': {
          const or = words.indexOf('--or-mark', j);
          const xor = words.indexOf('--xor-mark', j);
          if (or >= 0) path.mark |= Number(words[or + 1]);
          else if (xor >= 0) path.mark ^= Number(words[xor + 1]);
          else throw new Error(`unsupported MARK rule: ${rule.text}`);
          continue;
        }
        default: {
          if (IPTABLES_TARGETS.has(target)) throw new Error(`unsupported target ${target}`);
          for (const o of this.runChain(table, target, pkt, path, depth + 1)) {
            if (o.end === 'terminal') out.push(o);
            else out.push(...this.runRules(table, rules, i + 1, pkt, o.path, depth));
          }
          return out;
        }
      }
    }
    out.push({ path, end: 'fallthrough' });
    return out;
  }

  /** 'yes', 'no', or 'fork' for a random match, plus `recent --set` names. Unknown options throw. */
  private match(w: readonly string[], pkt: Pkt, path: Path): { result: 'yes' | 'no' | 'fork'; records: string[] } {
    let result: 'yes' | 'fork' = 'yes';
    let negate = false;
    const records: string[] = [];
    const j = w.indexOf('-j');
    const end = j < 0 ? w.length : j;
    for (let i = 0; i < end; i++) {
      const opt = w[i] ?? '';
      const val = w[i + 1] ?? '';
      let ok: boolean;
      switch (opt) {
        case '!':
          negate = true;
          continue;
        case '-m':
          i++;
          continue;
        case '--comment':
        case '--name':
        case '--mode':
          i++;
          continue;
        case '--reap':
          continue;
        case '-p':
          ok = val === pkt.proto;
          i++;
          break;
        case '--dport':
          ok = Number(val) === pkt.dport;
          i++;
          break;
        case '-d':
          ok = cidrContains(val, pkt.dst);
          i++;
          break;
        case '-s':
          ok = cidrContains(val, pkt.src);
          i++;
          break;
        case '--dst-type':
          ok = val === 'LOCAL' && this.isLocal(pkt.dst);
          i++;
          break;
        case '--src-type':
          ok = val === 'LOCAL' && this.isLocal(pkt.src);
          i++;
          break;
        case '--ctstate':
          ok = val.split(',').includes('NEW');
          i++;
          break;
        case '--mark': {
          const [v = '0', m = '0xffffffff'] = val.split('/');
          ok = (path.mark & Number(m)) === Number(v);
          i++;
          break;
        }
        case '--probability':
          i++;
          if (negate) throw new Error('negated probability');
          result = 'fork';
          continue;
        case '--rcheck': {
          const name = w[w.indexOf('--name') + 1] ?? '';
          ok = (this.opts.affinityHits ?? []).includes(name);
          break;
        }
        case '--seconds':
          i++;
          continue;
        case '--set':
          records.push(w[w.indexOf('--name') + 1] ?? '');
          continue;
        default:
          throw new Error(`unsupported match ${opt} in: ${w.join(' ')}`);
      }
      if (ok === negate) return { result: 'no', records: [] };
      negate = false;
    }
    // `--set` records the source only when the whole rule matched.
    return { result, records };
  }
}

/**
 * Traces `packet` through `rules`: restore text (applied to a fresh kernel) or tables built
 * with `applyIptablesRestore`. Paths that DNAT report the endpoint; a DROP/REJECT anywhere
 * ends a path with that verdict; a path no rule decides ends with NONE.
 */
export function traceIptables(rules: string | IptablesTables, packet: TracePacket, opts: TraceOptions): TraceResult {
  const tables = typeof rules === 'string' ? applyIptablesRestore(emptyIptables(), rules) : rules;
  const tracer = new Tracer(tables, opts);
  const proto = (packet.protocol ?? 'TCP').toLowerCase();
  const pkt: Pkt = { src: packet.sourceIP, dst: packet.destIP, dport: packet.destPort, proto };
  const local = packet.fromLocalProcess === true;
  const start: Path = { mark: 0, dnat: null, verdict: null, masquerade: false, affinity: [] };
  const paths: TracePath[] = [];
  for (const nat of tracer.runChain('nat', local ? 'OUTPUT' : 'PREROUTING', pkt, start, 0)) {
    const p = nat.path;
    const dnat = p.dnat;
    const after: Pkt = dnat ? { ...pkt, dst: splitDst(dnat) } : pkt;
    const filterChain = local ? 'OUTPUT' : tracer.isLocal(after.dst) ? 'INPUT' : 'FORWARD';
    p.verdict = dnat ? 'DNAT' : null;
    for (const f of tracer.runChain('filter', filterChain, after, p, 0)) {
      const fp = f.path;
      const blocked = fp.verdict === 'DROP' || fp.verdict === 'REJECT';
      if (!blocked) {
        if (dnat) fp.verdict = 'DNAT';
        for (const post of tracer.runChain('nat', 'POSTROUTING', after, fp, 0)) {
          paths.push(toPath(post.path, dnat));
        }
      } else {
        paths.push(toPath(fp, null));
      }
    }
  }
  return summarize(paths);
}

function splitDst(hostPort: string): string {
  return hostPort.startsWith('[') ? hostPort.slice(1, hostPort.indexOf(']')) : hostPort.slice(0, hostPort.lastIndexOf(':'));
}

function toPath(p: Path, dnat: string | null): TracePath {
  return {
    verdict: p.verdict ?? 'NONE',
    endpoint: p.verdict === 'DNAT' ? dnat : null,
    masquerade: p.masquerade,
    affinity: [...p.affinity],
  };
}
