// Test-only helpers for the validator tables (not exported from the package).

/**
 * Returns a deep copy of `base` with each `path -> value` edit applied; `undefined` deletes.
 * Paths look like `spec.ports[0].port`; map keys containing dots go in brackets: `labels["a.b/c"]`.
 */
export function patched<T>(base: T, edits: Readonly<Record<string, unknown>>): T {
  const out = structuredClone(base) as unknown;
  for (const [path, value] of Object.entries(edits)) {
    const keys = [...path.matchAll(/([^.[\]]+)|\[(\d+)\]|\["([^"]*)"\]/g)].map((m) => m[1] ?? m[3] ?? Number(m[2]));
    let node = out as Record<string | number, unknown>;
    for (const k of keys.slice(0, -1)) {
      if (node[k] === undefined || node[k] === null) node[k] = typeof k === 'number' ? [] : {};
      node = node[k] as Record<string | number, unknown>;
    }
    const last = keys[keys.length - 1];
    if (last === undefined) throw new Error(`empty path ${path}`);
    if (value === undefined) delete node[last];
    else node[last] = value;
  }
  return out as T;
}

/** Runs `fn` and returns what it threw (undefined when it returned normally). */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** A rejection case of a validator table. */
export interface RejectCase {
  readonly name: string;
  readonly edits: Readonly<Record<string, unknown>>;
  /** Defaults to the table's usual object label. */
  readonly object?: string;
  readonly field: string;
  readonly reason: RegExp;
}
