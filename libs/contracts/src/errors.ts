// Typed errors of the contracts. Callers branch on the class, never on message text.

/** A name that cannot become a subject token / KV key token (see tokens.ts). */
export class TokenEncodeError extends Error {
  readonly input: string;
  readonly reason: string;
  override readonly name = 'TokenEncodeError';
  constructor(
    input: string,
    reason: string,
  ) {
    super(`cannot encode ${JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}…` : input)} as a NATS token: ${reason}`);
    this.input = input;
    this.reason = reason;
  }
}

/** A token (or subject / key) that is not the canonical output of the encoder. */
export class TokenDecodeError extends Error {
  readonly token: string;
  readonly reason: string;
  override readonly name = 'TokenDecodeError';
  constructor(
    token: string,
    reason: string,
  ) {
    super(`invalid token ${JSON.stringify(token)}: ${reason}`);
    this.token = token;
    this.reason = reason;
  }
}
