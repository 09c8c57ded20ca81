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

  /**
   * The elements of set `set` of table `family table`, as nft's JSON prints them (numbers and
   * strings as text); null when the table or the set does not exist.
   */
  async listSetElements(family: 'ip' | 'ip6', table: string, set: string): Promise<readonly string[] | null> {
    const r = await this.#exec({ command: 'nft', args: ['-j', 'list', 'set', family, table, set] });
    if (r.code !== 0) return null;
    const doc = JSON.parse(r.stdout) as { nftables?: readonly { set?: { elem?: readonly unknown[] } }[] };
    const found = doc.nftables?.find((o) => o.set !== undefined)?.set;
    if (found === undefined) return null;
    return (found.elem ?? []).map((e) => (typeof e === 'object' ? JSON.stringify(e) : String(e)));
  }

  /** Deletes table `family name` if it exists (e.g. `ip`, `slicemesh`); absent is not an error. */
  async deleteTable(family: 'ip' | 'ip6', name: string): Promise<void> {
    // add-then-delete in one transaction: no error whether or not the table exists.
    await this.apply(`add table ${family} ${name}\ndelete table ${family} ${name}\n`);
  }
}
