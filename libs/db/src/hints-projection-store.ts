// The hints service's durable record, as whole-service operations: the snapshot it starts
// from, the rows a batch of consumed messages changed (with the consumer's offset, in one
// transaction), and the two steps of its publishing protocol (intent before the KV writes,
// confirmation after) for any number of services at once. The service keeps the live state in
// memory; this is what a restart loads before it tails the log from the stored offsets.

import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import type { HintDecision, NamespacedName, PublishedView } from './hints-store.ts';
import {
  deleteHintDecisionsOf, deleteHintNodes, deleteHintServices, deleteHintSlices, deletePublishedViews, loadHintDecisions, loadHintNodes,
  loadHintServices, loadHintSlices, loadPublishedViews, saveHintDecisions, upsertHintNodes, upsertHintServices, upsertHintSlices, upsertPublishedViews,
} from './hints-store.ts';
import { advanceOffset, getOffset } from './offsets.ts';
import type { Db } from './schema.ts';

export interface HintsSnapshot {
  readonly services: readonly Service[];
  /** Sorted by namespace/name. */
  readonly slices: readonly EndpointSlice[];
  readonly nodes: readonly Node[];
  readonly decisions: readonly HintDecision[];
  readonly publishedViews: readonly PublishedView[];
  /** The last applied sequence of each consumer asked for; 0 when it never applied anything. */
  readonly offsets: ReadonlyMap<string, number>;
}

/** The final state of every row a batch changed (a row both deleted and upserted is an upsert). */
export interface HintsIngestRows {
  readonly slices?: { readonly upserts: readonly EndpointSlice[]; readonly deletes: readonly NamespacedName[] };
  readonly nodes?: { readonly upserts: readonly Node[]; readonly deletes: readonly string[] };
  readonly services?: { readonly upserts: readonly Service[]; readonly deletes: readonly NamespacedName[] };
}

/** What one service's reconcile records before it writes KV. */
export interface HintsIntent {
  readonly namespace: string;
  readonly name: string;
  /** Replaces every stored decision of the service when set ([] removes them). */
  readonly decisions?: readonly HintDecision[];
  /** Keys about to be put, recorded unconfirmed (revision 0) with their new body. */
  readonly pending: readonly { readonly key: string; readonly body: unknown }[];
}

export class HintsProjectionStore {
  constructor(
    private readonly db: Db,
    private readonly cluster: string,
  ) {}

  /** Everything of the cluster, read in one repeatable-read transaction so rows and offsets agree. */
  loadSnapshot(consumers: readonly string[]): Promise<HintsSnapshot> {
    const c = this.cluster;
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const offsets = new Map<string, number>();
        for (const consumer of consumers) offsets.set(consumer, await getOffset(trx, consumer));
        return {
          services: await loadHintServices(trx, c),
          slices: await loadHintSlices(trx, c),
          nodes: await loadHintNodes(trx, c),
          decisions: await loadHintDecisions(trx, c),
          publishedViews: await loadPublishedViews(trx, c),
          offsets,
        };
      });
  }

  /**
   * Writes `rows` and moves `consumer`'s offset to `seq`, in one transaction. Returns false,
   * writing nothing, when the offset is already at or past `seq` (the batch was committed
   * before: the acknowledgement of the commit was lost).
   */
  commitIngest(consumer: string, seq: number, rows: HintsIngestRows): Promise<boolean> {
    const c = this.cluster;
    return this.db.transaction().execute(async (trx) => {
      if (seq <= (await getOffset(trx, consumer))) return false;
      if (rows.slices) {
        const byNamespace = new Map<string, string[]>();
        for (const d of rows.slices.deletes) byNamespace.set(d.namespace, [...(byNamespace.get(d.namespace) ?? []), d.name]);
        for (const [namespace, names] of byNamespace) await deleteHintSlices(trx, c, namespace, names);
        await upsertHintSlices(trx, c, rows.slices.upserts);
      }
      if (rows.nodes) {
        await deleteHintNodes(trx, c, rows.nodes.deletes);
        await upsertHintNodes(trx, c, rows.nodes.upserts);
      }
      if (rows.services) {
        await deleteHintServices(trx, c, rows.services.deletes);
        await upsertHintServices(trx, c, rows.services.upserts);
      }
      await advanceOffset(trx, consumer, seq);
      return true;
    });
  }

  /** Step 1 of publishing, for several services in one transaction: decisions and unconfirmed keys. */
  async recordIntents(intents: readonly HintsIntent[]): Promise<void> {
    if (intents.length === 0) return;
    const c = this.cluster;
    await this.db.transaction().execute(async (trx) => {
      const decided = intents.filter((i) => i.decisions !== undefined);
      await deleteHintDecisionsOf(trx, c, decided.map((i) => ({ namespace: i.namespace, service: i.name })));
      await saveHintDecisions(trx, c, decided.flatMap((i) => i.decisions ?? []));
      await upsertPublishedViews(trx, c, intents.flatMap((i) => i.pending.map((p) => ({ key: p.key, revision: 0, body: p.body }))));
    });
  }

  /** Step 3 of publishing, in one transaction: confirmed revisions recorded, deleted keys forgotten. */
  async recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void> {
    if (confirmed.length === 0 && deleted.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await upsertPublishedViews(trx, this.cluster, confirmed);
      await deletePublishedViews(trx, this.cluster, deleted);
    });
  }
}
