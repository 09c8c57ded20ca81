// Error types whose class carries the decision a caller must take.

/**
 * A failure that retrying cannot fix (invalid stored data, a rejected object). Workers
 * forget the key and report it; a JetStream consumer maps it to `msg.term()`.
 *
 * ### Examples
 * ```ts
 * throw new TerminalError('service default/web: spec.ports[0].port: must be 1..65535');
 * ```
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A bad setting. The message is one line naming the setting and the reason. */
export class ConfigError extends Error {
  /** How the user spelled it, e.g. `--workers` or `env WORKERS`. */
  readonly setting: string;
  readonly reason: string;
  override readonly name = 'ConfigError';
  constructor(
    setting: string,
    reason: string,
  ) {
    super(`${setting}: ${reason}`);
    this.setting = setting;
    this.reason = reason;
  }
}

// Bounds the walk in case of a cyclic cause chain.
const MAX_CAUSE_DEPTH = 16;

/**
 * True when `e`, or any error in its `cause` chain, is a TerminalError — so wrapping a
 * terminal error for context does not turn it into a retryable one. False for non-errors.
 */
export function isTerminal(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && cur instanceof Error; depth++) {
    if (cur instanceof TerminalError) return true;
    cur = cur.cause;
  }
  return false;
}
