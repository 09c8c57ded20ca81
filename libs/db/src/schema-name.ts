// Schema names travel into a connection option (`-c search_path=...`) and into DDL, so they are
// restricted to plain lowercase identifiers that need no quoting anywhere.

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws unless `schema` is a lowercase SQL identifier of at most 63 characters. */
export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*, at most 63 characters`);
  }
}
