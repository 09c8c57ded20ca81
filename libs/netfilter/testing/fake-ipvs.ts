// A fake ipvsadm: virtual and real servers with connection counters the test sets, answering
// `ipvsadm -L -n` in ipvsadm's listing format and applying `ipvsadm -R` batches line by line
// (like the real tool, a failing line stops the batch and earlier lines stay applied). It can
// also play a kernel without IPVS, as on our CI machines.

import type { ExecRequest, ExecResult } from '../src/exec.ts';
import type { ExecHandler } from './recording-exec.ts';

interface Rs {
  address: string;
  port: number;
  weight: number;
  active: number;
  inactive: number;
}

interface Vs {
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly address: string;
  readonly port: number;
  scheduler: string;
  persistence: number | null;
  readonly realServers: Map<string, Rs>;
}

/** What `ipvsadm -L -n` says on a kernel without IPVS. */
export const NO_IPVS_MESSAGE = "Can't initialize ipvs: Protocol not available\nAre you sure that IP Virtual Server is built in the kernel or as module?\n";

function join(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

function split(text: string): { address: string; port: number } | null {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  return m?.[1] !== undefined && m[2] !== undefined ? { address: m[1], port: Number(m[2]) } : null;
}

export interface FakeIpvsOptions {
  /** false: every ipvsadm call fails with NO_IPVS_MESSAGE. Defaults to true. */
  readonly available?: boolean;
}

export class FakeIpvs implements ExecHandler {
  readonly #available: boolean;
  readonly #services = new Map<string, Vs>();
  /** Batches applied with `ipvsadm -R` (also the failed ones), in order. */
  readonly batches: string[] = [];

  constructor(opts: FakeIpvsOptions = {}) {
    this.#available = opts.available ?? true;
  }

  /** Sets the connection counters of a real server (`vs`: `TCP/10.0.0.1:80`, `rs`: `10.1.0.1:8080`). */
  setConnections(vs: string, rs: string, active: number, inactive = 0): void {
    const r = this.#services.get(vs)?.realServers.get(rs);
    if (!r) throw new Error(`fake ipvs: no real server ${rs} in ${vs}`);
    r.active = active;
    r.inactive = inactive;
  }

  /** `TCP/10.0.0.1:80 rr [persistent N]` then ` -> rs weight` lines, sorted: for assertions. */
  dump(): string[] {
    const out: string[] = [];
    for (const key of [...this.#services.keys()].sort()) {
      const vs = this.#services.get(key);
      if (!vs) continue;
      out.push(`${key} ${vs.scheduler}${vs.persistence !== null ? ` persistent ${vs.persistence}` : ''}`);
      for (const k of [...vs.realServers.keys()].sort()) out.push(`  -> ${k} weight ${vs.realServers.get(k)?.weight}`);
    }
    return out;
  }

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command !== 'ipvsadm') return undefined;
    if (!this.#available) return { code: 2, stdout: '', stderr: NO_IPVS_MESSAGE };
    if (req.args[0] === '-L' && req.args.includes('-n')) return { code: 0, stdout: this.#list(), stderr: '' };
    if (req.args[0] === '-R') return this.#restore(req.input ?? '');
    if (req.args[0] === '-C') {
      this.#services.clear();
      return { code: 0, stdout: '', stderr: '' };
    }
    const err = this.#command(req.args);
    return err === null ? { code: 0, stdout: '', stderr: '' } : { code: 1, stdout: '', stderr: `${err}\n` };
  }

  #list(): string {
    const out = ['IP Virtual Server version 1.2.1 (size=4096)', 'Prot LocalAddress:Port Scheduler Flags', '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn'];
    for (const key of [...this.#services.keys()].sort()) {
      const vs = this.#services.get(key);
      if (!vs) continue;
      const flags = vs.persistence !== null ? ` persistent ${vs.persistence}` : '';
      out.push(`${vs.protocol.padEnd(4)} ${join(vs.address, vs.port)} ${vs.scheduler}${flags}`);
      for (const rs of vs.realServers.values()) {
        out.push(`  -> ${join(rs.address, rs.port).padEnd(28)} Masq    ${String(rs.weight).padEnd(6)} ${String(rs.active).padEnd(10)} ${rs.inactive}`);
      }
    }
    return `${out.join('\n')}\n`;
  }

  #restore(text: string): ExecResult {
    this.batches.push(text);
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] ?? '').trim();
      if (line === '') continue;
      const err = this.#command(line.split(/\s+/));
      if (err !== null) return { code: 1, stdout: '', stderr: `ipvsadm: line ${i + 1}: ${err}\n` };
    }
    return { code: 0, stdout: '', stderr: '' };
  }

  /** Applies one command line; returns the error text or null. */
  #command(words: readonly string[]): string | null {
    const value = (flag: string): string | undefined => {
      const i = words.indexOf(flag);
      return i >= 0 ? words[i + 1] : undefined;
    };
    const proto = words.includes('-t') ? 'TCP' : words.includes('-u') ? 'UDP' : words.includes('--sctp-service') ? 'SCTP' : null;
    const svcText = value('-t') ?? value('-u') ?? value('--sctp-service');
    const svc = svcText === undefined ? null : split(svcText);
    if (proto === null || svc === null) return 'Invalid service address';
    const key = `${proto}/${join(svc.address, svc.port)}`;
    const vs = this.#services.get(key);
    const op = words[0];
    const persistText = value('-p');
    const persistence = words.includes('-p') ? (persistText !== undefined && /^\d+$/.test(persistText) ? Number(persistText) : 300) : null;
    switch (op) {
      case '-A':
        if (vs) return 'Service already exists';
        this.#services.set(key, { protocol: proto, ...svc, scheduler: value('-s') ?? 'wlc', persistence, realServers: new Map() });
        return null;
      case '-E':
        if (!vs) return 'No such service';
        vs.scheduler = value('-s') ?? vs.scheduler;
        vs.persistence = persistence;
        return null;
      case '-D':
        if (!vs) return 'No such service';
        this.#services.delete(key);
        return null;
      case '-a':
      case '-e':
      case '-d': {
        if (!vs) return 'No such service';
        const rsText = value('-r');
        const rs = rsText === undefined ? null : split(rsText);
        if (rsText === undefined || rs === null) return 'Invalid server address';
        const had = vs.realServers.get(rsText);
        if (op === '-a') {
          if (had) return 'Destination already exists';
          vs.realServers.set(rsText, { ...rs, weight: Number(value('-w') ?? 1), active: 0, inactive: 0 });
        } else if (!had) {
          return 'No such destination';
        } else if (op === '-e') {
          had.weight = Number(value('-w') ?? had.weight);
        } else {
          vs.realServers.delete(rsText);
        }
        return null;
      }
      default:
        return `fake: ${op ?? ''} is not modelled`;
    }
  }
}
