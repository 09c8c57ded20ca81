// Follows a packet through nftables rules (read from `nft -f` text, never from the renderer's
// structures): base chains run hook by hook in priority order — prerouting, then input or
// forward (by the post-DNAT destination), then postrouting; output then postrouting for a
// local process. `numgen random mod n == k` forks the trace (n > 1). The packet is the first
// of a connection (`ct state new`). Only the statement subset our renderer prints is known;
// anything else throws so renderer drift is caught.

import { cidrContains } from '../policy.ts';
import type { NftChain, NftRuleset, NftTable } from './nft-sim.ts';
import { applyNft } from './nft-sim.ts';
import type { TraceOptions, TracePacket, TracePath, TraceResult, TraceVerdict } from './trace-result.ts';
import { splitHostPort, summarize } from './trace-result.ts';

interface Path {
  dst: string;
  dport: number;
  mark: number;
  dnat: string | null;
  masquerade: boolean;
  affinity: string[];
}

type End = 'fallthrough' | 'return' | 'accept' | 'drop' | 'reject';
interface Outcome {
  readonly path: Path;
  readonly end: End;
}

const MAX_DEPTH = 64;

function clone(p: Path): Path {
  return { ...p, affinity: [...p.affinity] };
}

class NftTracer {
  private readonly table: NftTable;
  private readonly src: string;
  private readonly proto: string;
  private readonly opts: TraceOptions;

  constructor(
    table: NftTable,
    src: string,
    proto: string,
    opts: TraceOptions,
  ) {
    this.table = table;
    this.src = src;
    this.proto = proto;
    this.opts = opts;
  }

  isLocal(ip: string): boolean {
    return this.opts.nodeIPs.includes(ip) || cidrContains('127.0.0.0/8', ip) || ip === '::1';
  }

  runChain(name: string, path: Path, depth: number): Outcome[] {
    if (depth > MAX_DEPTH) throw new Error(`jump loop at ${name}`);
    const chain: NftChain | undefined = this.table.chains.get(name);
    if (!chain) throw new Error(`no chain ${name}`);
    return this.runRules(chain.rules, 0, path, depth);
  }

  private runRules(rules: readonly (readonly string[])[], from: number, path: Path, depth: number): Outcome[] {
    for (let i = from; i < rules.length; i++) {
      const r = this.runRule(rules[i] ?? [], path, depth);
      if (r === null) continue; // no match
      const out: Outcome[] = [];
      for (const o of r) {
        if (o.end === 'fallthrough') out.push(...this.runRules(rules, i + 1, o.path, depth));
        else out.push(o);
      }
      return out;
    }
    return [{ path, end: 'fallthrough' }];
  }

  /** null: the rule did not match. Otherwise the outcomes of the rule (fallthrough = go on). */
  private runRule(w: readonly string[], path: Path, depth: number): Outcome[] | null {
    const forks: Outcome[] = [];
    const word = (k: number): string => w[k] ?? '';
    for (let i = 0; i < w.length; ) {
      const t = word(i);
      if (t === 'comment') return [...forks, { path, end: 'fallthrough' }];
      if ((t === 'ip' || t === 'ip6' || t === 'meta') && word(i + 2) === '.') {
        // `ip daddr . meta l4proto . th dport vmap @m` or `meta l4proto . th dport vmap @m`
        const vm = w.indexOf('vmap', i);
        const parts = w.slice(i, vm).join(' ').split(' . ');
        const key = parts.map((p) => this.field(p, path)).join(' . ');
        const map = this.table.containers.get(word(vm + 1).slice(1));
        if (!map) throw new Error(`no map ${word(vm + 1)}`);
        const verdict = map.elements.get(key);
        if (verdict === undefined) return null;
        return [...forks, ...this.verdict(verdict.split(' '), path, depth)];
      }
      if (t === 'ip' || t === 'ip6') {
        const value = this.field(`${t} ${word(i + 1)}`, path);
        let k = i + 2;
        const negate = word(k) === '!=';
        if (negate) k++;
        let ok: boolean;
        if (word(k) === '{') {
          const close = w.indexOf('}', k);
          ok = w.slice(k + 1, close).filter((x) => x !== ',').some((c) => cidrContains(c, value));
          k = close + 1;
        } else if (word(k).startsWith('@')) {
          const set = word(k).slice(1);
          const c = this.table.containers.get(set);
          if (!c) throw new Error(`no set ${set}`);
          // Dynamic (affinity) sets are filled by traffic; `affinityHits` says which hold the source.
          ok = c.elements.has(value) || (this.opts.affinityHits ?? []).includes(set);
          k++;
        } else {
          ok = cidrContains(word(k), value);
          k++;
        }
        if (ok === negate) return null;
        i = k;
      } else if (t === 'tcp' || t === 'udp' || t === 'sctp') {
        if (word(i + 1) !== 'dport') throw new Error(`unsupported: ${w.join(' ')}`);
        if (this.proto !== t || Number(word(i + 2)) !== path.dport) return null;
        i += 3;
      } else if (t === 'meta' && word(i + 1) === 'l4proto') {
        if (word(i + 2) !== this.proto) return null;
        i += 3;
      } else if (t === 'ct' && word(i + 1) === 'state') {
        if (!word(i + 2).split(',').includes('new')) return null;
        i += 3;
      } else if (t === 'fib' && word(i + 2) === 'type' && word(i + 3) === 'local') {
        if (!this.isLocal(word(i + 1) === 'saddr' ? this.src : path.dst)) return null;
        i += 4;
      } else if (t === 'numgen' && word(i + 1) === 'random' && word(i + 2) === 'mod') {
        const n = Number(word(i + 3));
        const k = word(i + 4) === '==' ? i + 5 : i + 4;
        const v = Number(word(k));
        if (!(v >= 0 && v < n)) return null;
        if (n > 1) forks.push({ path: clone(path), end: 'fallthrough' });
        i = k + 1;
      } else if (t === 'mark' && word(i + 1) === 'and') {
        if ((path.mark & Number(word(i + 2))) !== Number(word(i + 4))) return null;
        i += 5;
      } else if (t === 'mark' && word(i + 1) === 'set' && word(i + 2) === 'mark') {
        const v = Number(word(i + 4));
        if (word(i + 3) === 'or') path.mark |= v;
        else if (word(i + 3) === 'xor') path.mark ^= v;
        else throw new Error(`unsupported: ${w.join(' ')}`);
        i += 5;
      } else if (t === 'update' && word(i + 1).startsWith('@')) {
        path.affinity.push(word(i + 1).slice(1));
        i = w.indexOf('}', i) + 1;
      } else {
        // A verdict or NAT statement ends the rule.
        const end = w.indexOf('comment', i);
        return [...forks, ...this.verdict(w.slice(i, end < 0 ? w.length : end), path, depth)];
      }
    }
    return [...forks, { path, end: 'fallthrough' }];
  }

  private field(expr: string, path: Path): string {
    switch (expr) {
      case 'ip daddr':
      case 'ip6 daddr':
        return path.dst;
      case 'ip saddr':
      case 'ip6 saddr':
        return this.src;
      case 'meta l4proto':
        return this.proto;
      case 'th dport':
        return String(path.dport);
      default:
        throw new Error(`unsupported expression ${expr}`);
    }
  }

  private verdict(v: readonly string[], path: Path, depth: number): Outcome[] {
    const [kind = '', arg = ''] = v;
    switch (kind) {
      case 'accept':
      case 'drop':
      case 'reject':
        return [{ path, end: kind }];
      case 'return':
        return [{ path, end: 'return' }];
      case 'dnat': {
        const to = v[v.length - 1] ?? '';
        const hp = splitHostPort(to);
        path.dnat = to;
        path.dst = hp.ip;
        path.dport = hp.port;
        return [{ path, end: 'accept' }];
      }
      case 'masquerade':
        path.masquerade = true;
        return [{ path, end: 'accept' }];
      case 'jump':
        return this.runChain(arg, path, depth + 1).map((o) => (o.end === 'return' ? { path: o.path, end: 'fallthrough' } : o));
      case 'goto':
        // The goto'd chain replaces ours: when it ends, ours ends too.
        return this.runChain(arg, path, depth + 1).map((o) => (o.end === 'fallthrough' ? { path: o.path, end: 'return' } : o));
      default:
        throw new Error(`unsupported statement ${v.join(' ')}`);
    }
  }
}

/**
 * Traces `packet` through `rules`: `nft -f` text (applied to an empty ruleset) or a ruleset
 * from `applyNft`, looking only at table `table` (default the first one). DNAT paths report
 * the endpoint, drop/reject end a path, a path nothing decides ends with NONE.
 */
export function traceNftables(rules: string | NftRuleset, packet: TracePacket, opts: TraceOptions & { readonly table?: string }): TraceResult {
  const ruleset = typeof rules === 'string' ? applyNft(new Map(), rules) : rules;
  const table = opts.table !== undefined ? ruleset.get(opts.table) : ruleset.values().next().value;
  if (!table) throw new Error('no table to trace');
  const tracer = new NftTracer(table, packet.sourceIP, (packet.protocol ?? 'TCP').toLowerCase(), opts);
  const hooks = (hook: string): string[] =>
    [...table.chains.entries()]
      .filter(([, c]) => c.base?.hook === hook)
      .sort((a, b) => (a[1].base?.priority ?? 0) - (b[1].base?.priority ?? 0))
      .map(([n]) => n);

  let live: Path[] = [{ dst: packet.destIP, dport: packet.destPort, mark: 0, dnat: null, masquerade: false, affinity: [] }];
  const done: TracePath[] = [];
  const runHook = (hook: string, paths: Path[]): Path[] => {
    let current = paths;
    for (const chain of hooks(hook)) {
      const next: Path[] = [];
      for (const p of current) {
        for (const o of tracer.runChain(chain, p, 0)) {
          if (o.end === 'drop' || o.end === 'reject') done.push(finish(o.path, o.end === 'drop' ? 'DROP' : 'REJECT'));
          else next.push(o.path);
        }
      }
      current = next;
    }
    return current;
  };
  if (packet.fromLocalProcess) {
    live = runHook('output', live);
  } else {
    live = runHook('prerouting', live);
    const toInput = live.filter((p) => tracer.isLocal(p.dst));
    const toForward = live.filter((p) => !tracer.isLocal(p.dst));
    live = [...runHook('input', toInput), ...runHook('forward', toForward)];
  }
  live = runHook('postrouting', live);
  for (const p of live) done.push(finish(p, p.dnat ? 'DNAT' : 'NONE'));
  return summarize(done);
}

function finish(p: Path, verdict: TraceVerdict): TracePath {
  return { verdict, endpoint: verdict === 'DNAT' ? p.dnat : null, masquerade: p.masquerade, affinity: [...p.affinity] };
}
