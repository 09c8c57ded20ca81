// Partition leases for replicas (issue 9). A lease row per (group, partition) says who may write
// that partition and with which fencing token; the token grows by one at every acquisition, and
// every write of a partition's state checks it in the same transaction, so a replica that lost
// its lease (expired, released, taken over) has its late writes refused instead of applied.
// lease_members is the heartbeat each replica keeps; the live members decide the assignment.
// Expiry is judged by the database's clock (now()), the one clock every replica shares.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('partition_leases')
    .addColumn('lease_group', 'text', (c) => c.notNull())
    .addColumn('partition', 'integer', (c) => c.notNull())
    .addColumn('holder', 'text')
    .addColumn('token', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('acquired_at', 'timestamptz')
    .addPrimaryKeyConstraint('partition_leases_pk', ['lease_group', 'partition'])
    .execute();
  await db.schema
    .createTable('lease_members')
    .addColumn('lease_group', 'text', (c) => c.notNull())
    .addColumn('member', 'text', (c) => c.notNull())
    .addColumn('incarnation', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('joined_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('lease_members_pk', ['lease_group', 'member'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('lease_members').ifExists().execute();
  await db.schema.dropTable('partition_leases').ifExists().execute();
}
