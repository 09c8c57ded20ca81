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

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command !== 'nft') return undefined;
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
