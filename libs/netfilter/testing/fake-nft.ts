// A fake `nft -f -`: the script is applied as one transaction by the dataplane's nft
// simulator; an error leaves the ruleset untouched and is reported like nft 1.0 does it,
// `/dev/stdin:LINE:COLS: Error: ...`, exit 1.

import type { NftRuleset } from '@slicemesh/dataplane/testing';
import { NftError, applyNft } from '@slicemesh/dataplane/testing';
import type { ExecRequest, ExecResult } from '../src/exec.ts';
import type { ExecHandler } from './recording-exec.ts';

export class FakeNft implements ExecHandler {
  #ruleset: NftRuleset = new Map();
  /** Scripts applied successfully, in order. */
  readonly scripts: string[] = [];

  /** The current ruleset (for `traceNftables` and assertions). */
  get ruleset(): NftRuleset {
    return this.#ruleset;
  }

  // `nft -j list set`, shaped like nft 1.0.6's output (metainfo first); elements as numbers when numeric.
  #listSet(family: string, table: string, name: string): ExecResult {
    const c = this.#ruleset.get(`${family} ${table}`)?.containers.get(name);
    if (c === undefined || c.kind !== 'set') return { code: 1, stdout: '', stderr: 'Error: No such file or directory\n' };
    const elem = [...c.elements.keys()].map((k) => (/^\d+$/.test(k) ? Number(k) : k));
    const set = { family, name, table, type: c.type, handle: 1, ...(elem.length > 0 ? { elem } : {}) };
    return { code: 0, stdout: JSON.stringify({ nftables: [{ metainfo: { version: '1.0.6', json_schema_version: 1 } }, { set }] }), stderr: '' };
  }

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command !== 'nft') return undefined;
    if (req.args[0] === '-j' && req.args[1] === 'list' && req.args[2] === 'set') return this.#listSet(req.args[3] ?? '', req.args[4] ?? '', req.args[5] ?? '');
    if (req.args[0] !== '-f' || req.args[1] !== '-') return { code: 1, stdout: '', stderr: `fake: nft ${req.args.join(' ')} is not modelled\n` };
    const script = req.input ?? '';
    try {
      this.#ruleset = applyNft(this.#ruleset, script);
      this.scripts.push(script);
      return { code: 0, stdout: '', stderr: '' };
    } catch (e) {
      if (!(e instanceof NftError)) throw e;
      const text = script.split('\n')[e.line - 1] ?? '';
      return { code: 1, stdout: '', stderr: `/dev/stdin:${e.line}:1-${Math.max(1, text.length)}: Error: ${e.message}\n${text}\n` };
    }
  }
}
