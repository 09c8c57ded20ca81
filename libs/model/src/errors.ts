// Typed errors shared by the pure libraries and their callers.

/** A Kubernetes object (or part of one) that cannot be accepted. Never half-applied. */
export class InvalidObjectError extends Error {
  /** e.g. `Service default/web`, or `item 3` when the object has no usable identity. */
  readonly object: string;
  /** JSON path of the offending field, e.g. `spec.ports[0].port`. */
  readonly field: string;
  readonly reason: string;
  override readonly name = 'InvalidObjectError';
  constructor(
    object: string,
    field: string,
    reason: string,
  ) {
    super(`${object}: ${field}: ${reason}`);
    this.object = object;
    this.field = field;
    this.reason = reason;
  }
}

/** A caller-supplied option outside its allowed range (e.g. max endpoints per slice). */
export class InvalidArgumentError extends Error {
  readonly argument: string;
  readonly reason: string;
  override readonly name = 'InvalidArgumentError';
  constructor(
    argument: string,
    reason: string,
  ) {
    super(`${argument}: ${reason}`);
    this.argument = argument;
    this.reason = reason;
  }
}
