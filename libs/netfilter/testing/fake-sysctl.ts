// A fake `sysctl` (-n KEY, -w KEY=VALUE) over a map of known keys; a key not in the map fails
// as on a kernel without that module (IPVS's keys on our CI kernel).

import type { ExecRequest, ExecResult } from '../src/exec.ts';
import type { ExecHandler } from './recording-exec.ts';

export class FakeSysctl implements ExecHandler {
  readonly values: Map<string, string>;

  /** `known`: the keys the kernel has, with their current values. */
  constructor(known: Readonly<Record<string, string>>) {
    this.values = new Map(Object.entries(known));
  }

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command !== 'sysctl') return undefined;
    const [flag, arg = ''] = req.args;
    const key = flag === '-w' ? arg.slice(0, arg.indexOf('=')) : arg;
    const missing: ExecResult = { code: 255, stdout: '', stderr: `sysctl: cannot stat /proc/sys/${key.split('.').join('/')}: No such file or directory\n` };
    if (!this.values.has(key)) return missing;
    if (flag === '-n') return { code: 0, stdout: `${this.values.get(key) ?? ''}\n`, stderr: '' };
    if (flag === '-w') {
      const value = arg.slice(arg.indexOf('=') + 1);
      this.values.set(key, value);
      return { code: 0, stdout: `${key} = ${value}\n`, stderr: '' };
    }
    return undefined;
  }
}
