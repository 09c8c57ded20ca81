// Applies rendered nftables scripts with `nft -f -`: a script is one transaction, so the
// table moves from one complete state to the next or not at all.

import { applyError, nftErrorLine } from './apply-error.ts';
import type { Exec } from './exec.ts';

export interface NftApplierOptions {
  readonly exec: Exec;
}

export class NftApplier {
  readonly #exec: Exec;

  constructor(opts: NftApplierOptions) {
    this.#exec = opts.exec;
  }

  /** Applies `script` (an empty script is a no-op). Throws ApplyError quoting the failing line ±3. */
  async apply(script: string): Promise<void> {
    if (script.trim() === '') return;
    const r = await this.#exec({ command: 'nft', args: ['-f', '-'], input: script });
    if (r.code !== 0) throw applyError('nft', r, script, nftErrorLine);
  }

  /** Deletes table `family name` if it exists (e.g. `ip`, `slicemesh`); absent is not an error. */
  async deleteTable(family: 'ip' | 'ip6', name: string): Promise<void> {
    // add-then-delete in one transaction: no error whether or not the table exists.
    await this.apply(`add table ${family} ${name}\ndelete table ${family} ${name}\n`);
  }
}
