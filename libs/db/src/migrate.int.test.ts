import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb } from './connect.ts';
import type { DbHandle } from './connect.ts';
import { MIGRATION_TABLE, MIGRATIONS, SCHEMAS_LOCK, dropSchema, migrateToLatest } from './migrate.ts';
import { testDatabaseUrl, uniqueSchemaName } from '../testing/test-db.ts';
import { LZ4_COLUMNS } from './migrations/0007_lz4_bodies.ts';

const EXPECTED_TABLES = [
  'consumer_offsets', 'dirty_services', 'endpoint_slices', 'hint_decisions', 'hint_foreign_slices', 'hint_nodes', 'hint_services', 'hint_slices',
  'kube_log_cuts', 'kube_objects', 'kube_snapshot_objects', 'kube_snapshot_slices', 'kube_snapshots', 'lease_members', 'outbox', 'partition_leases', 'published_views', 'reconciles', 'relay_positions',
];

const opened: DbHandle[] = [];
const schemas: string[] = [];
afterAll(async () => {
  const admin = opened[0];
  for (const s of schemas) await sql`drop schema if exists ${sql.id(s)} cascade`.execute(admin!.db);
  for (const h of opened) await h.close();
});

async function open(schema: string): Promise<DbHandle> {
  const h = await createDb({ url: await testDatabaseUrl(), schema, max: 2 });
  opened.push(h);
  return h;
}

/** Holds the schemas lock in a transaction of `h` until release() (which waits for its end). */
async function holdSchemasLock(h: DbHandle, mode: 'shared' | 'exclusive'): Promise<{ release(): Promise<void> }> {
  let release: () => void = () => {};
  const released = new Promise<void>((r) => (release = r));
  let locked: () => void = () => {};
  const isLocked = new Promise<void>((r) => (locked = r));
  const done = h.db.transaction().execute(async (trx) => {
    if (mode === 'shared') await sql`select pg_advisory_xact_lock_shared(hashtext(${SCHEMAS_LOCK}))`.execute(trx);
    else await sql`select pg_advisory_xact_lock(hashtext(${SCHEMAS_LOCK}))`.execute(trx);
    locked();
    await released;
  });
  await isLocked;
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

async function tablesIn(h: DbHandle, schema: string): Promise<string[]> {
  const r = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = ${schema} order by table_name`.execute(h.db);
  return r.rows.map((x) => x.table_name);
}

describe('migrateToLatest', () => {
  it('five concurrent starters on a fresh schema all succeed and apply each migration exactly once', async () => {
    const schema = uniqueSchemaName('mig');
    schemas.push(schema);
    // Separate pools, like separate processes.
    const handles = await Promise.all(Array.from({ length: 5 }, () => open(schema)));
    const results = await Promise.all(handles.map((h) => migrateToLatest(h.db, schema)));
    const applied = results.flat();
    expect(applied).toEqual(Object.keys(MIGRATIONS));
    expect(results.filter((r) => r.length === 0)).toHaveLength(4);
    expect(await tablesIn(handles[0]!, schema)).toEqual([...EXPECTED_TABLES, MIGRATION_TABLE, `${MIGRATION_TABLE}_lock`].sort());
    const done = await sql<{ name: string }>`select name from ${sql.id(schema)}.${sql.id(MIGRATION_TABLE)}`.execute(handles[0]!.db);
    expect(done.rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS));
  });

  it('creates the schema when missing and is a no-op ([]) when up to date', async () => {
    const schema = uniqueSchemaName('mig');
    schemas.push(schema);
    const h = await open(schema);
    expect(await tablesIn(h, schema)).toEqual([]);
    expect(await migrateToLatest(h.db, schema)).toEqual(['0001_init', '0002_reconcile_settings', '0003_hint_foreign_slices', '0004_published_view_digests', '0005_partition_leases', '0006_kube_snapshots', '0007_lz4_bodies', '0008_outbox_json_text']);
    expect(await migrateToLatest(h.db, schema)).toEqual([]);
  });

  it('compresses the large documents with lz4 where the server has it', async () => {
    const schema = uniqueSchemaName('mig');
    schemas.push(schema);
    const h = await open(schema);
    await migrateToLatest(h.db, schema);
    const lz4 = await sql<{ ok: boolean }>`select bool_or('lz4' = any(enumvals)) as ok from pg_settings where name = 'default_toast_compression'`.execute(h.db);
    const columns = await sql<{ table: string; column: string; method: string }>`
      select c.relname as table, a.attname as column, a.attcompression::text as method from pg_attribute a join pg_class c on c.oid = a.attrelid
      join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema} and a.attcompression <> ''`.execute(h.db);
    const got = columns.rows.map((r) => [r.table, r.column, r.method]).sort();
    const want = lz4.rows[0]?.ok === true ? LZ4_COLUMNS.map(([t, c]) => [t, c, 'l']).sort() : [];
    expect(got).toEqual(want);
  });

  it('an up-to-date schema is a no-op read without any lock (it does not wait for a schema drop in progress elsewhere)', async () => {
    const schema = uniqueSchemaName('mig');
    schemas.push(schema);
    const h = await open(schema);
    await migrateToLatest(h.db, schema);
    // Another session holds the schemas lock exclusively, as dropSchema does while it drops.
    const held = await holdSchemasLock(await open(schema), 'exclusive');
    try {
      const t0 = performance.now();
      expect(await migrateToLatest(h.db, schema)).toEqual([]);
      expect(performance.now() - t0).toBeLessThan(5_000);
    } finally {
      await held.release();
    }
  });

  it('creates tables in the named schema even when the pool points elsewhere', async () => {
    const target = uniqueSchemaName('mig');
    const other = uniqueSchemaName('mig');
    schemas.push(target, other);
    const h = await open(other);
    await migrateToLatest(h.db, target);
    expect(await tablesIn(h, target)).toContain('kube_objects');
    expect(await tablesIn(h, other)).toEqual([]);
  });

  const badNames = [
    { name: 'rejects a schema name needing quotes (upper case)', schema: 'Bad' },
    { name: 'rejects a schema name with SQL in it', schema: 'x; drop table y' },
    { name: 'rejects an empty schema name', schema: '' },
  ];
  for (const tc of badNames) {
    it(tc.name, async () => {
      const h = opened[0] ?? (await open(uniqueSchemaName('mig')));
      await expect(migrateToLatest(h.db, tc.schema)).rejects.toThrow(/invalid schema name/);
    });
  }
});

describe('dropSchema', () => {
  it('waits while a migration holds the schemas lock, then drops the schema', async () => {
    const schema = uniqueSchemaName('drop');
    const h = await open(schema);
    await migrateToLatest(h.db, schema);
    // A migration in progress, as migrateToLatest holds it.
    const migrating = await holdSchemasLock(await open(uniqueSchemaName('holder')), 'shared');
    let dropped = false;
    const drop = dropSchema(h.db, schema).then(() => (dropped = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(dropped).toBe(false);
    expect(await tablesIn(h, schema)).not.toEqual([]);
    await migrating.release();
    await drop;
    expect(await tablesIn(h, schema)).toEqual([]);
    const left = await sql<{ n: number }>`select count(*)::int as n from pg_namespace where nspname = ${schema}`.execute(h.db);
    expect(left.rows[0]?.n).toBe(0);
  });
});
