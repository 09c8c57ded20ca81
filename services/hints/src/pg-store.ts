// Postgres behind the hints ports, on @slicemesh/db's hints tables. A few reads the library does
// not offer (one service by name, the stored version of one node/service, the known services)
// are written here with the same kysely handle.

import type { Db, HintDecision, PublishedView, Trx } from '@slicemesh/db';
import {
  advanceOffset,
  deleteHintDecisions,
  deleteHintNodes,
  deleteHintServices,
  deleteHintSlices,
  deletePublishedViews,
  getOffset,
  loadHintDecisions,
  loadHintNodes,
  loadHintSlices,
  loadPublishedViews,
  saveHintDecisions,
  upsertHintNodes,
  upsertHintServices,
  upsertHintSlices,
  upsertPublishedViews,
} from '@slicemesh/db';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import type { KubeEnvelope, SliceChangedV1 } from './messages.ts';
import { isStaleVersion } from './node-topology.ts';
import type { IngestStore, ServiceStateStore, ViewIntent } from './ports.ts';
import type { ServiceKey } from './published-index.ts';
import { serviceKeyOf } from './published-index.ts';

type Body = { readonly metadata?: { readonly resourceVersion?: string } };

export class PgHintsStore implements IngestStore, ServiceStateStore {
  constructor(
    private readonly db: Db,
    private readonly cluster: string,
  ) {}

  /** Runs `apply` in one transaction with the offset unless `seq` was already applied. */
  async #once(consumer: string, seq: number, apply: (trx: Trx) => Promise<void>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (seq <= (await getOffset(trx, consumer))) return false;
      await apply(trx);
      await advanceOffset(trx, consumer, seq);
      return true;
    });
  }

  applySliceChanged(consumer: string, seq: number, msg: SliceChangedV1): Promise<boolean> {
    return this.#once(consumer, seq, async (trx) => {
      // Deletes first: a name both deleted and upserted in one event ends up upserted.
      await deleteHintSlices(trx, this.cluster, msg.namespace, msg.deletes);
      await upsertHintSlices(trx, this.cluster, msg.upserts);
    });
  }

  applyNodeEvent(consumer: string, seq: number, env: KubeEnvelope<Node>): Promise<boolean> {
    return this.#once(consumer, seq, async (trx) => {
      const name = env.object.metadata.name;
      const row = await trx.selectFrom('hint_nodes').select('body').where('cluster', '=', this.cluster).where('name', '=', name).executeTakeFirst();
      if (row !== undefined && isStaleVersion(env.object.metadata.resourceVersion, (row.body as Body).metadata?.resourceVersion)) return;
      if (env.type === 'Deleted.v1') await deleteHintNodes(trx, this.cluster, [name]);
      else await upsertHintNodes(trx, this.cluster, [env.object]);
    });
  }

  applyServiceEvent(consumer: string, seq: number, env: KubeEnvelope<Service>): Promise<boolean> {
    return this.#once(consumer, seq, async (trx) => {
      const { namespace = '', name } = env.object.metadata;
      const row = await this.#serviceRow(trx, namespace, name);
      if (row !== undefined && isStaleVersion(env.object.metadata.resourceVersion, (row.body as Body).metadata?.resourceVersion)) return;
      if (env.type === 'Deleted.v1') await deleteHintServices(trx, this.cluster, [{ namespace, name }]);
      else await upsertHintServices(trx, this.cluster, [env.object]);
    });
  }

  #serviceRow(db: Db, namespace: string, name: string) {
    return db
      .selectFrom('hint_services')
      .select('body')
      .where('cluster', '=', this.cluster)
      .where('namespace', '=', namespace)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  async loadService(namespace: string, name: string): Promise<Service | undefined> {
    return (await this.#serviceRow(this.db, namespace, name))?.body as Service | undefined;
  }

  loadSlices(namespace: string, name: string): Promise<readonly EndpointSlice[]> {
    return loadHintSlices(this.db, this.cluster, { namespace, service: name });
  }

  loadDecisions(namespace: string, name: string): Promise<readonly HintDecision[]> {
    return loadHintDecisions(this.db, this.cluster, { namespace, service: name });
  }

  async recordIntent(namespace: string, name: string, intent: ViewIntent): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      if (intent.decisions !== undefined) {
        await deleteHintDecisions(trx, this.cluster, namespace, name);
        await saveHintDecisions(trx, this.cluster, intent.decisions);
      }
      await upsertPublishedViews(trx, this.cluster, intent.pending.map((p) => ({ key: p.key, revision: 0, body: p.body })));
    });
  }

  async recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await upsertPublishedViews(trx, this.cluster, confirmed);
      await deletePublishedViews(trx, this.cluster, deleted);
    });
  }

  // ---- startup ----

  loadNodes(): Promise<readonly Node[]> {
    return loadHintNodes(this.db, this.cluster);
  }

  loadPublishedViews(): Promise<readonly PublishedView[]> {
    return loadPublishedViews(this.db, this.cluster);
  }

  /** Every service with a stored Service, slice or decision, sorted. */
  async knownServices(): Promise<ServiceKey[]> {
    const c = this.cluster;
    const [services, slices, decisions] = await Promise.all([
      this.db.selectFrom('hint_services').select(['namespace', 'name']).where('cluster', '=', c).execute(),
      this.db.selectFrom('hint_slices').select(['namespace', 'service as name']).distinct().where('cluster', '=', c).execute(),
      this.db.selectFrom('hint_decisions').select(['namespace', 'service as name']).distinct().where('cluster', '=', c).execute(),
    ]);
    const keys = new Set([...services, ...slices, ...decisions].map((r) => serviceKeyOf(r.namespace, r.name)));
    return [...keys].sort();
  }
}
