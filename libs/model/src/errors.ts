// Typed errors shared by the pure libraries and their callers.

/** A Kubernetes object (or part of one) that cannot be accepted. Never half-applied. */
export class InvalidObjectError extends Error {
  override readonly name = 'InvalidObjectError';
  constructor(
    /** e.g. `Service default/web`, or `item 3` when the object has no usable identity. */
    readonly object: string,
    /** JSON path of the offending field, e.g. `spec.ports[0].port`. */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${object}: ${field}: ${reason}`);
  }
}

/** A caller-supplied option outside its allowed range (e.g. max endpoints per slice). */
export class InvalidArgumentError extends Error {
  override readonly name = 'InvalidArgumentError';
  constructor(
    readonly argument: string,
    readonly reason: string,
  ) {
    super(`${argument}: ${reason}`);
  }
}
