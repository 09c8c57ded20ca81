// Kernel settings through `sysctl` (IPVS mode's, D.5.5): each key is read first and written
// only when it differs, so a node already set up sees no writes.

import type { Sysctl } from '@slicemesh/dataplane';
import { applyError } from './apply-error.ts';
import type { Exec } from './exec.ts';

export interface SysctlWriterOptions {
  readonly exec: Exec;
}

export class SysctlWriter {
  readonly #exec: Exec;

  constructor(opts: SysctlWriterOptions) {
    this.#exec = opts.exec;
  }

  /** Sets every key to its value; returns the keys it changed. Throws ApplyError for a key the kernel lacks. */
  async ensure(settings: readonly Sysctl[]): Promise<string[]> {
    const changed: string[] = [];
    for (const s of settings) {
      const now = await this.#exec({ command: 'sysctl', args: ['-n', s.key] });
      if (now.code === 0 && now.stdout.trim() === s.value) continue;
      const r = await this.#exec({ command: 'sysctl', args: ['-w', `${s.key}=${s.value}`] });
      if (r.code !== 0) throw applyError('sysctl', r, '', () => null);
      changed.push(s.key);
    }
    return changed;
  }
}
