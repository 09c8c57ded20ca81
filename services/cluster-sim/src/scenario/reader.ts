// Field readers for scenario YAML that fail with the file and the path of the offending
// field (`scenarios/x.yaml: deployments[2].replicas: must be a non-negative integer`).

export class ScenarioError extends Error {
  readonly source: string;
  readonly path: string;
  readonly reason: string;
  override readonly name = 'ScenarioError';
  constructor(
    source: string,
    path: string,
    reason: string,
  ) {
    super(`${source}: ${path || '(top level)'}: ${reason}`);
    this.source = source;
    this.path = path;
    this.reason = reason;
  }
}

export type Raw = Readonly<Record<string, unknown>>;

export class Reader {
  readonly source: string;

  constructor(source: string) {
    this.source = source;
  }

  fail(path: string, reason: string): never {
    throw new ScenarioError(this.source, path, reason);
  }

  /** An object whose keys are all in `allowed` (typos fail loudly). */
  object(v: unknown, path: string, allowed: readonly string[]): Raw {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) this.fail(path, `must be a mapping, got ${describe(v)}`);
    for (const key of Object.keys(v)) {
      if (!allowed.includes(key)) this.fail(path ? `${path}.${key}` : key, `unknown field (allowed: ${allowed.join(', ')})`);
    }
    return v as Raw;
  }

  list(v: unknown, path: string): readonly unknown[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) this.fail(path, `must be a list, got ${describe(v)}`);
    return v;
  }

  string(v: unknown, path: string): string {
    if (typeof v === 'number') return String(v);
    if (typeof v !== 'string' || v === '') this.fail(path, `must be a non-empty string, got ${describe(v)}`);
    return v;
  }

  optString(v: unknown, path: string): string | undefined {
    return v === undefined || v === null ? undefined : this.string(v, path);
  }

  int(v: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      this.fail(path, `must be an integer between ${min} and ${max}, got ${describe(v)}`);
    }
    return v;
  }

  number(v: unknown, path: string, min: number): number {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) this.fail(path, `must be a number >= ${min}, got ${describe(v)}`);
    return v;
  }

  bool(v: unknown, path: string, fallback: boolean): boolean {
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'boolean') this.fail(path, `must be true or false, got ${describe(v)}`);
    return v;
  }

  oneOf<T extends string>(v: unknown, path: string, values: readonly T[], fallback?: T): T {
    if ((v === undefined || v === null) && fallback !== undefined) return fallback;
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) this.fail(path, `must be one of ${values.join(', ')}, got ${describe(v)}`);
    return v as T;
  }

  stringMap(v: unknown, path: string): Readonly<Record<string, string>> {
    if (v === undefined || v === null) return {};
    if (typeof v !== 'object' || Array.isArray(v)) this.fail(path, `must be a mapping of strings, got ${describe(v)}`);
    const out: Record<string, string> = {};
    for (const [k, value] of Object.entries(v)) {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') this.fail(`${path}.${k}`, `must be a string, got ${describe(value)}`);
      out[k] = String(value);
    }
    return out;
  }
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return JSON.stringify(v);
}
