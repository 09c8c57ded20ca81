// A rendered rule the way `iptables-save` prints it back, so a full sync can tell which of its
// chains the kernel already holds word for word and leave those alone (an agent restarted on
// a node with 10k services rewrites nothing that is still right). iptables-save prints the
// generic options first (-s, -d, -i, -o, -p, -f, each with its `!`), addresses with a prefix
// length, then the matches in the order given, then the target with its options as the
// extension saves them. A rule this does not know how to respell compares unequal, and its
// chain is simply written again: the comparison can cost a rewrite, never a stale rule.

/** Splits rule text on blanks; double quotes group words (`--comment "a b"`). */
export function ruleWords(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push(m[1] ?? m[2] ?? '');
  return out;
}

const GENERIC = new Map([
  ['-s', '-s'],
  ['--source', '-s'],
  ['-d', '-d'],
  ['--destination', '-d'],
  ['-i', '-i'],
  ['--in-interface', '-i'],
  ['-o', '-o'],
  ['--out-interface', '-o'],
  ['-p', '-p'],
  ['--protocol', '-p'],
]);
const GENERIC_ORDER = ['-s', '-d', '-i', '-o', '-p'];

/** `xt_statistic` keeps the probability as a 31-bit fraction and prints it with 11 decimals. */
function savedProbability(text: string): string {
  const p = Number(text);
  if (!Number.isFinite(p)) return text;
  return (Math.round(p * 0x80000000) / 0x80000000).toFixed(11);
}

function savedAddress(text: string, family: 'IPv4' | 'IPv6'): string {
  return text.includes('/') ? text : `${text}/${family === 'IPv6' ? 128 : 32}`;
}

/** `-m recent` options in the order libxt_recent saves them, defaults spelled out. */
const RECENT_ORDER = ['--rcheck', '--set', '--update', '--remove', '--seconds', '--reap', '--hitcount', '--rttl', '--name', '--mask', '--rsource', '--rdest'];
const RECENT_VALUED = new Set(['--seconds', '--hitcount', '--name', '--mask']);

function savedRecent(opts: readonly string[], family: 'IPv4' | 'IPv6'): string[] | null {
  const seen = new Map<string, string[]>();
  for (let i = 0; i < opts.length; i++) {
    const o = opts[i] ?? '';
    if (!RECENT_ORDER.includes(o)) return null; // `!` or something we do not render: leave it
    seen.set(o, RECENT_VALUED.has(o) ? [o, opts[++i] ?? ''] : [o]);
  }
  if (!seen.has('--mask')) seen.set('--mask', ['--mask', family === 'IPv6' ? 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff' : '255.255.255.255']);
  if (!seen.has('--rsource') && !seen.has('--rdest')) seen.set('--rsource', ['--rsource']);
  return RECENT_ORDER.flatMap((o) => seen.get(o) ?? []);
}

/** The target part (`-j NAME opts`) as the target extension saves it. */
function savedTarget(words: readonly string[], family: 'IPv4' | 'IPv6'): string[] {
  const [jump, name, ...opts] = words;
  if (jump === undefined || name === undefined) return [...words];
  if (name === 'MARK' && opts.length === 2) {
    const [op, value] = opts;
    if (op === '--or-mark') return [jump, name, '--set-xmark', `${value}/${value}`];
    if (op === '--xor-mark') return [jump, name, '--set-xmark', `${value}/0x0`];
    if (op === '--set-mark' && value !== undefined && !value.includes('/')) return [jump, name, '--set-xmark', `${value}/0xffffffff`];
  }
  if (name === 'REJECT' && opts.length === 0) return [jump, name, '--reject-with', family === 'IPv6' ? 'icmp6-port-unreachable' : 'icmp-port-unreachable'];
  return [...words];
}

/**
 * The words `iptables-save` prints after `-A CHAIN` for a rule rendered as `args` (the text
 * after `-A CHAIN`). Example: `-m comment --comment "a b" -m tcp -p tcp -d 10.0.0.1 --dport 80
 * -j X` → `-d 10.0.0.1/32 -p tcp -m comment --comment a b -m tcp --dport 80 -j X`.
 */
export function savedForm(args: string, family: 'IPv4' | 'IPv6'): string[] {
  const words = ruleWords(args);
  const generic = new Map<string, string[]>();
  const rest: string[] = [];
  let target: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? '';
    const negated = w === '!' && GENERIC.has(words[i + 1] ?? '');
    const opt = GENERIC.get(negated ? (words[i + 1] ?? '') : w);
    if (opt !== undefined) {
      const at = negated ? i + 2 : i + 1;
      let value = words[at] ?? '';
      if (opt === '-s' || opt === '-d') value = savedAddress(value, family);
      if (opt === '-p') value = value.toLowerCase();
      generic.set(opt, negated ? ['!', opt, value] : [opt, value]);
      i = at;
      continue;
    }
    if (w === '-j' || w === '-g') {
      target = savedTarget(words.slice(i), family);
      break;
    }
    if (w === '-m' && words[i + 1] === 'recent') {
      // Its options run to the next match, generic option or target.
      let end = i + 2;
      while (end < words.length && !['-m', '-j', '-g', '!'].includes(words[end] ?? '') && !GENERIC.has(words[end] ?? '')) end++;
      const saved = savedRecent(words.slice(i + 2, end), family);
      if (saved !== null) {
        rest.push('-m', 'recent', ...saved);
        i = end - 1;
        continue;
      }
    }
    if (w === '--probability' && i + 1 < words.length) {
      rest.push(w, savedProbability(words[i + 1] ?? ''));
      i++;
      continue;
    }
    rest.push(w);
  }
  return [...GENERIC_ORDER.flatMap((o) => generic.get(o) ?? []), ...rest, ...target];
}

/** Whether rendered `-A CHAIN …` lines equal a chain's saved rules (each as its text after `-A CHAIN`), in order. */
export function sameAsSaved(rendered: readonly string[], saved: readonly string[], family: 'IPv4' | 'IPv6'): boolean {
  if (rendered.length !== saved.length) return false;
  for (let i = 0; i < rendered.length; i++) {
    const line = rendered[i] ?? '';
    const args = line.slice(line.indexOf(' ', 3) + 1);
    const want = savedForm(args, family);
    const have = ruleWords(saved[i] ?? '');
    if (want.length !== have.length || want.some((w, j) => w !== have[j])) return false;
  }
  return true;
}

/** Rules per chain and table as `iptables-save` printed them (text after `-A CHAIN`). */
export interface IptablesKernelChains {
  readonly filter: ReadonlyMap<string, readonly string[]>;
  readonly nat: ReadonlyMap<string, readonly string[]>;
}

export interface NarrowedScript {
  readonly script: string;
  /** Chains the script still declares (rewrites), per table. */
  readonly written: { readonly filter: readonly string[]; readonly nat: readonly string[] };
  /** Chains left alone because the node holds them word for word. */
  readonly kept: number;
  /** Stale chains the script deletes. */
  readonly deleted: readonly string[];
}

/**
 * Narrows a full `renderIptables` script to what the node lacks: a declared chain whose rules
 * equal the node's (`sameAsSaved`) is dropped with its rules, every other chain is written as
 * rendered, and `stale` chains (ours, on the node, no longer rendered) are flushed and
 * deleted at the end of the nat block. Chains whose rules differ only partly are rewritten
 * whole; a chain left alone keeps its name, so what jumps to it still finds it. Pure.
 */
export function narrowToKernel(script: string, kernel: IptablesKernelChains, family: 'IPv4' | 'IPv6', stale: readonly string[]): NarrowedScript {
  const out: string[] = [];
  const written = { filter: [] as string[], nat: [] as string[] };
  let kept = 0;
  let table: 'filter' | 'nat' | null = null;
  let declared: string[] = [];
  let rules = new Map<string, string[]>();
  const other: string[] = [];
  const flush = (): void => {
    if (table === null) return;
    const t: 'filter' | 'nat' = table;
    const write = declared.filter((c) => {
      const saved = kernel[t].get(c);
      const same = saved !== undefined && sameAsSaved(rules.get(c) ?? [], saved, family);
      if (same) kept++;
      return !same;
    });
    const gone = t === 'nat' ? stale : [];
    for (const c of [...write, ...gone]) out.push(`:${c} - [0:0]`);
    out.push(...other);
    for (const c of write) out.push(...(rules.get(c) ?? []));
    for (const c of gone) out.push(`-X ${c}`);
    written[t].push(...write);
  };
  for (const line of script.split('\n')) {
    if (line.startsWith('*')) {
      table = line === '*nat' ? 'nat' : line === '*filter' ? 'filter' : null;
      declared = [];
      rules = new Map();
      other.length = 0;
      out.push(line);
    } else if (line === 'COMMIT') {
      flush();
      table = null;
      out.push(line);
    } else if (table === null) {
      out.push(line);
    } else if (line.startsWith(':')) {
      const name = line.slice(1, line.indexOf(' '));
      declared.push(name);
      rules.set(name, []);
    } else {
      const chain = line.startsWith('-A ') ? line.slice(3, line.indexOf(' ', 3)) : '';
      const list = rules.get(chain);
      // Rules of chains the script does not declare (the built-in jumps) stay as they are.
      if (list !== undefined) list.push(line);
      else if (!line.startsWith('-X ')) other.push(line);
    }
  }
  return { script: out.join('\n'), written, kept, deleted: stale };
}
