// A fake `ip` for the dummy-interface helpers: links, and host addresses on them. It can play
// a kernel without the dummy link type (our CI kernel has none).

import type { ExecRequest, ExecResult } from '../src/exec.ts';
import type { ExecHandler } from './recording-exec.ts';

export interface FakeIpLinkOptions {
  /** false: `ip link add X type dummy` fails as on a kernel without dummy links. Defaults to true. */
  readonly dummySupported?: boolean;
}

export class FakeIpLink implements ExecHandler {
  readonly #dummy: boolean;
  readonly #links = new Map<string, Set<string>>();

  constructor(opts: FakeIpLinkOptions = {}) {
    this.#dummy = opts.dummySupported ?? true;
  }

  /** CIDRs on `dev`, sorted; undefined when the link does not exist. */
  addresses(dev: string): string[] | undefined {
    const a = this.#links.get(dev);
    return a ? [...a].sort() : undefined;
  }

  /** Adds a host interface (or an address on one) that `ip -o addr show` lists, e.g. `eth0`, `192.168.0.2/24`. */
  addHostAddress(dev: string, cidr: string): void {
    const a = this.#links.get(dev) ?? new Set<string>();
    a.add(cidr);
    this.#links.set(dev, a);
  }

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command !== 'ip' || req.args[0] === 'netns') return undefined;
    if (req.args.length === 3 && req.args[0] === '-o' && req.args[1] === 'addr' && req.args[2] === 'show') {
      const lines: string[] = [];
      let n = 1;
      for (const [dev, addrs] of [...this.#links.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
        n++;
        for (const c of [...addrs].sort()) {
          const scope = c.toLowerCase().startsWith('fe80:') ? 'link' : 'global';
          lines.push(`${n}: ${dev}    ${c.includes(':') ? 'inet6' : 'inet'} ${c} scope ${scope} ${dev}\\       valid_lft forever preferred_lft forever\n`);
        }
      }
      return { code: 0, stdout: lines.join(''), stderr: '' };
    }
    const a = req.args;
    const ok = (stdout = ''): ExecResult => ({ code: 0, stdout, stderr: '' });
    const noDev = (dev: string): ExecResult => ({ code: 1, stdout: '', stderr: `Device "${dev}" does not exist.\n` });
    if (a[0] === 'link' && a[1] === 'show' && a[2] === 'dev') {
      const dev = a[3] ?? '';
      return this.#links.has(dev) ? ok(`7: ${dev}: <BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN mode DEFAULT\n`) : noDev(dev);
    }
    if (a[0] === 'link' && a[1] === 'add' && a[3] === 'type' && a[4] === 'dummy') {
      if (!this.#dummy) return { code: 2, stdout: '', stderr: 'Error: Unknown device type.\n' };
      if (this.#links.has(a[2] ?? '')) return { code: 2, stdout: '', stderr: 'RTNETLINK answers: File exists\n' };
      this.#links.set(a[2] ?? '', new Set());
      return ok();
    }
    if (a[0] === '-o' && a[1] === 'addr' && a[2] === 'show' && a[3] === 'dev') {
      const dev = a[4] ?? '';
      const addrs = this.#links.get(dev);
      if (!addrs) return noDev(dev);
      return ok([...addrs].sort().map((c) => `7: ${dev}    ${c.includes(':') ? 'inet6' : 'inet'} ${c} scope global ${dev}\\       valid_lft forever preferred_lft forever\n`).join(''));
    }
    if (a[0] === 'addr' && (a[1] === 'add' || a[1] === 'del') && a[3] === 'dev') {
      const cidr = a[2] ?? '';
      const addrs = this.#links.get(a[4] ?? '');
      if (!addrs) return { code: 1, stdout: '', stderr: `Cannot find device "${a[4] ?? ''}"\n` };
      if (a[1] === 'add') {
        if (addrs.has(cidr)) return { code: 2, stdout: '', stderr: 'RTNETLINK answers: File exists\n' };
        addrs.add(cidr);
      } else if (!addrs.delete(cidr)) {
        return { code: 2, stdout: '', stderr: 'RTNETLINK answers: Cannot assign requested address\n' };
      }
      return ok();
    }
    return undefined;
  }
}
