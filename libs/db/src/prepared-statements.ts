// Named prepared statements for the writes a connection runs again and again. kysely sends every
// statement unnamed, so Postgres parses, analyses and plans it on each call; the slicer's and the
// hints service's commits are long CTEs (fence, offset, rows from a JSON parameter) whose text
// never changes, and planning them took about a third of their server time (pg_stat_statements,
// 500 pod changes/s: 2.8 s of 9.5 s). Named, each is parsed once per connection and, after five
// runs, executed with a cached generic plan: their row counts come from JSON parameters the
// planner cannot look into anyway.
//
// Only data-changing statements (`with`, `insert`, `update`, `delete`) are named: a cached
// `select *` would fail with "cached plan must not change result type" after a migration alters
// its table. A text is named from its third run on, so one-off statements (and texts that embed a
// varying list) never take a name; each connection names at most `max` texts.

import { createHash } from 'node:crypto';
import type pg from 'pg';

const DATA_CHANGING = /^\s*(?:with|insert|update|delete)\b/i;

export interface PrepareOptions {
  /** Runs of a text before it is named. Default 3. */
  readonly after?: number;
  /** Named texts per connection. Default 200. */
  readonly max?: number;
}

/** Texts seen but not named are forgotten past this many, so varying texts cannot grow the count map without bound. */
const SEEN_LIMIT = 2000;

/** The statement name of `text`: stable across connections and processes, within Postgres's 63 bytes. */
export function statementName(text: string): string {
  return `sm_${createHash('sha1').update(text).digest('hex')}`;
}

/** Decides, per connection, which texts run as named statements. */
export class StatementNamer {
  readonly #after: number;
  readonly #max: number;
  readonly #seen = new Map<string, number>();
  readonly #named = new Map<string, string>();

  constructor(opts: PrepareOptions = {}) {
    this.#after = opts.after ?? 3;
    this.#max = opts.max ?? 200;
  }

  /** The name to run `text` under, or undefined to run it unnamed. */
  nameOf(text: string): string | undefined {
    const named = this.#named.get(text);
    if (named !== undefined) return named;
    if (this.#named.size >= this.#max || !DATA_CHANGING.test(text)) return undefined;
    const runs = (this.#seen.get(text) ?? 0) + 1;
    if (runs < this.#after) {
      if (this.#seen.size >= SEEN_LIMIT) this.#seen.clear();
      this.#seen.set(text, runs);
      return undefined;
    }
    this.#seen.delete(text);
    const name = statementName(text);
    this.#named.set(text, name);
    return name;
  }
}

type QueryFn = (...args: unknown[]) => unknown;

/** Makes `client` run repeated data-changing statements (text + values, no callback) as named ones. */
export function prepareRepeated(client: pg.ClientBase, opts: PrepareOptions = {}): void {
  const namer = new StatementNamer(opts);
  const query = (client.query as QueryFn).bind(client);
  const wrapped: QueryFn = (...args) => {
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && Array.isArray(values)) {
      const name = namer.nameOf(text);
      if (name !== undefined) return query({ name, text, values });
    }
    return query(...args);
  };
  (client as unknown as { query: QueryFn }).query = wrapped;
}
