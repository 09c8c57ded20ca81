// ServiceRecordStore on the durable record, with concurrent reconciles' writes grouped: the
// intents of every service reconciling at the same time go to Postgres in one transaction,
// and so do their confirmations. Each service still sees its own intent durable before it
// writes KV and its confirmation after, so the protocol of service-reconciler.ts holds per
// service; a failed transaction fails every reconcile in it, each of which retries.

import type { HintsIntent, PublishedView } from '@slicemesh/db';
import { GroupCommit } from './group-commit.ts';
import type { ServiceRecordStore, ViewIntent } from './ports.ts';
import type { HintsProjection } from './projection.ts';
import { serviceKeyOf } from './published-index.ts';

/** The durable writes behind it (HintsProjectionStore). */
export interface PublishingRecord {
  recordIntents(intents: readonly HintsIntent[]): Promise<void>;
  recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void>;
}

interface Published {
  readonly confirmed: readonly PublishedView[];
  readonly deleted: readonly string[];
}

export class BatchedRecords implements ServiceRecordStore {
  private readonly projection: HintsProjection;
  readonly #intents: GroupCommit<HintsIntent>;
  readonly #published: GroupCommit<Published>;

  constructor(
    record: PublishingRecord,
    projection: HintsProjection,
  ) {
    this.projection = projection;
    this.#intents = new GroupCommit((items) => record.recordIntents(items));
    this.#published = new GroupCommit((items) => record.recordPublished(items.flatMap((i) => i.confirmed), items.flatMap((i) => i.deleted)));
  }

  async recordIntent(namespace: string, name: string, intent: ViewIntent): Promise<void> {
    await this.#intents.submit({ namespace, name, ...intent });
    if (intent.decisions !== undefined) this.projection.setDecisions(serviceKeyOf(namespace, name), intent.decisions);
  }

  recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void> {
    if (confirmed.length === 0 && deleted.length === 0) return Promise.resolve();
    return this.#published.submit({ confirmed, deleted });
  }
}
