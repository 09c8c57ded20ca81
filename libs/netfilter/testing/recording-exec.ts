// A fake `Exec` for unit tests: records every call, lets fakes of the kernel tools answer
// them, and injects failures on demand. Commands wrapped in `ip netns exec NS` are unwrapped
// before dispatch and recorded with their namespace.

import type { Exec, ExecRequest, ExecResult } from '../src/exec.ts';
import { formatCommand } from '../src/exec.ts';

/** A fake tool: answers the calls it understands, returns undefined for the rest. */
export interface ExecHandler {
  handle(req: ExecRequest): ExecResult | undefined;
}

export interface RecordedCall extends ExecRequest {
  /** The namespace of `ip netns exec`, or null for a plain command. */
  readonly netns: string | null;
}

interface Failure {
  readonly match: (call: RecordedCall) => boolean;
  readonly result: ExecResult;
  remaining: number;
}

function unwrap(req: ExecRequest): RecordedCall {
  const [a, b, ns, command, ...rest] = req.args;
  if (req.command === 'ip' && a === 'netns' && b === 'exec' && ns !== undefined && command !== undefined) {
    return { ...req, command, args: rest, netns: ns };
  }
  return { ...req, netns: null };
}

export class RecordingExec {
  /** Every call in order, unwrapped from `ip netns exec`. */
  readonly calls: RecordedCall[] = [];
  readonly #handlers: readonly ExecHandler[];
  readonly #failures: Failure[] = [];

  /** `handlers` are asked in order; a call none answers gets exit 127 ("command not found"). */
  constructor(handlers: readonly ExecHandler[] = []) {
    this.#handlers = handlers;
  }

  /** The Exec to hand to adapters. */
  readonly exec: Exec = async (req) => {
    const call = unwrap(req);
    this.calls.push(call);
    const failure = this.#failures.find((f) => f.remaining > 0 && f.match(call));
    if (failure) {
      failure.remaining--;
      return failure.result;
    }
    for (const h of this.#handlers) {
      const r = h.handle(call);
      if (r !== undefined) return r;
    }
    return { code: 127, stdout: '', stderr: `${call.command}: command not found (no fake answers it)\n` };
  };

  /**
   * The next `times` calls matching `match` fail with `result` (default: exit 1, empty
   * output) without reaching any fake, so the fake's state stays as it was.
   */
  failWhen(match: (call: RecordedCall) => boolean, result: Partial<ExecResult> = {}, times = 1): void {
    this.#failures.push({ match, result: { code: 1, stdout: '', stderr: '', ...result }, remaining: times });
  }

  /** Each call as a command line, e.g. `iptables -w -t nat -C OUTPUT ...`. */
  commandLines(): string[] {
    return this.calls.map((c) => formatCommand(c));
  }

  /** The calls of one program. */
  callsTo(command: string): RecordedCall[] {
    return this.calls.filter((c) => c.command === command);
  }

  /** Forgets the recorded calls (fakes keep their state). */
  clear(): void {
    this.calls.length = 0;
  }
}
