// A fake `ipset` for the restore adapter: `restore -exist` (create, flush, add, each line
// checked and the whole script refused at the first bad line, as ipset reports it) and
// `list -n`. Members are kept as text; the real tool's parsing is the int tests' job.

import type { ExecRequest, ExecResult } from '../src/exec.ts';
import type { ExecHandler } from './recording-exec.ts';

export class FakeIpset implements ExecHandler {
  readonly #sets = new Map<string, { type: string; members: Set<string> }>();

  /** Members of `name`, sorted; undefined when the set does not exist. */
  members(name: string): string[] | undefined {
    const s = this.#sets.get(name);
    return s ? [...s.members].sort() : undefined;
  }

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command !== 'ipset') return undefined;
    if (req.args[0] === 'list' && req.args[1] === '-n') return { code: 0, stdout: [...this.#sets.keys()].map((n) => `${n}\n`).join(''), stderr: '' };
    if (req.args[0] !== 'restore') return undefined;
    const exist = req.args.includes('-exist');
    const lines = (req.input ?? '').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] ?? '';
      if (line.trim() === '') continue;
      const [verb, name = '', arg = ''] = line.split(/\s+/);
      const fail = (why: string): ExecResult => ({ code: 1, stdout: '', stderr: `ipset v7.17: Error in line ${i + 1}: ${why}\n` });
      const set = this.#sets.get(name);
      if (verb === 'create') {
        if (set && !exist) return fail('Set cannot be created: set with the same name already exists');
        if (set && set.type !== arg) return fail('Set cannot be created: set with the same name already exists');
        if (!set) this.#sets.set(name, { type: arg, members: new Set() });
      } else if (verb === 'flush') {
        if (!set) return fail('The set with the given name does not exist');
        set.members.clear();
      } else if (verb === 'add') {
        if (!set) return fail('The set with the given name does not exist');
        if (arg === '') return fail('Syntax error: missing member');
        set.members.add(arg);
      } else {
        return fail(`Unknown command ${verb ?? ''}`);
      }
    }
    return { code: 0, stdout: '', stderr: '' };
  }
}
