import { describe, expect, it } from 'vitest';
import type { HintDecision, HintsIntent, PublishedView } from '@slicemesh/db';
import { BatchedRecords } from './batched-records.ts';
import { HintsProjection } from './projection.ts';

const decision = (service: string, addressType = 'IPv4'): HintDecision => ({
  namespace: 'default', service, addressType, enabled: true, mode: 'Auto', event: null, reason: 'r', decidedAt: new Date(0),
});

function harness(fail = false) {
  const calls: string[] = [];
  const record = {
    recordIntents: (intents: readonly HintsIntent[]) => {
      calls.push(`intents ${intents.map((i) => i.name).join(',')}`);
      return fail ? Promise.reject(new Error('down')) : Promise.resolve();
    },
    recordPublished: (confirmed: readonly PublishedView[], deleted: readonly string[]) => {
      calls.push(`published ${confirmed.map((c) => c.key).join(',')} -${deleted.join(',')}`);
      return Promise.resolve();
    },
  };
  const projection = new HintsProjection();
  return { calls, projection, records: new BatchedRecords(record, projection) };
}

describe('BatchedRecords', () => {
  it('intents of services reconciling at the same time share one transaction, and so do their confirmations', async () => {
    const h = harness();
    await Promise.all([
      h.records.recordIntent('default', 'web', { decisions: [decision('web')], pending: [{ key: 'k-web' }] }),
      h.records.recordIntent('default', 'api', { pending: [{ key: 'k-api' }] }),
    ]);
    await Promise.all([
      h.records.recordPublished([{ key: 'k-web', revision: 1, digest: 'd1' }], []),
      h.records.recordPublished([{ key: 'k-api', revision: 2, digest: 'd2' }], ['k-old']),
      h.records.recordPublished([], []),
    ]);
    expect(h.calls).toEqual(['intents web,api', 'published k-web,k-api -k-old']);
  });

  it('stored decisions become visible in memory once their intent is durable, sorted by address type', async () => {
    const h = harness();
    const written = h.records.recordIntent('default', 'web', { decisions: [decision('web', 'IPv6'), decision('web', 'IPv4')], pending: [] });
    expect(h.projection.decisions('default/web')).toEqual([]);
    await written;
    expect(h.projection.decisions('default/web').map((d) => d.addressType)).toEqual(['IPv4', 'IPv6']);
    await h.records.recordIntent('default', 'web', { decisions: [], pending: [] });
    expect(h.projection.decisions('default/web')).toEqual([]);
  });

  it('a failed intent leaves the decisions in memory as they were', async () => {
    const h = harness(true);
    await expect(h.records.recordIntent('default', 'web', { decisions: [decision('web')], pending: [] })).rejects.toThrow(/down/);
    expect(h.projection.decisions('default/web')).toEqual([]);
  });
});
