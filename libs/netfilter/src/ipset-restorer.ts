// Applies rendered ipsets (IPVS mode's companion sets, D.5.4) with one `ipset restore -exist`
// per sync: existing sets are kept (`create` of one that exists is a no-op with -exist), each
// `flush` + `add` block leaves a set with exactly the rendered members.

import { applyError } from './apply-error.ts';
import type { Exec } from './exec.ts';

export interface IpsetRestorerOptions {
  readonly exec: Exec;
}

/** The line `ipset restore` names: `ipset v7.17: Error in line 2: …`. null when none. */
export function ipsetErrorLine(stderr: string): number | null {
  const m = /Error in line (\d+)/.exec(stderr);
  return m?.[1] !== undefined ? Number(m[1]) : null;
}

export class IpsetRestorer {
  readonly #exec: Exec;

  constructor(opts: IpsetRestorerOptions) {
    this.#exec = opts.exec;
  }

  /** `ipset restore -exist` with `script` on stdin; throws ApplyError quoting the failing line ±3. */
  async restore(script: string): Promise<void> {
    const r = await this.#exec({ command: 'ipset', args: ['restore', '-exist'], input: script });
    if (r.code !== 0) throw applyError('ipset restore', r, script, ipsetErrorLine);
  }

  /** Names of the sets that exist, in listing order. */
  async setNames(): Promise<string[]> {
    const r = await this.#exec({ command: 'ipset', args: ['list', '-n'] });
    if (r.code !== 0) throw applyError('ipset list', r, '', () => null);
    return r.stdout.split('\n').filter((l) => l !== '');
  }
}
