import { describe, expect, it } from 'vitest';
import type { HintDecision, HintsIntent, PublishedView } from '@slicemesh/db';
import { BatchedRecords } from './batched-records.ts';
import { HintsProjection } from './projection.ts';

const decision = (service: string, addressType = 'IPv4'): HintDecision => ({
  namespace: 'default', service, addressType, enabled: true, mode: 'Auto', event: null, reason: 'r', decidedAt: new Date(0),
});
const view = (key: string, revision: number): PublishedView => ({ key, revision, digest: `d${revision}` });
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `failures`: how many confirmation writes fail before they succeed; `final`: the failure drops the queue. */
function harness(opts: { intentsFail?: boolean; failures?: number; final?: boolean } = {}) {
  const calls: string[] = [];
  let failures = opts.failures ?? 0;
  const failed: unknown[] = [];
  let retries = 0;
  const record = {
    recordIntents: (intents: readonly HintsIntent[]) => {
      calls.push(`intents ${intents.map((i) => i.name).join(',')}`);
      return opts.intentsFail ? Promise.reject(new Error('down')) : Promise.resolve();
    },
    recordPublished: (confirmed: readonly PublishedView[], deleted: readonly string[]) => {
      calls.push(`published ${confirmed.map((c) => `${c.key}@${c.revision}`).join(',')} -${deleted.join(',')}`);
      if (failures > 0) {
        failures--;
        return Promise.reject(new Error('down'));
      }
      return Promise.resolve();
    },
  };
  const projection = new HintsProjection();
  const records = new BatchedRecords(record, projection, {
    onFailed: (err) => {
      failed.push(err);
      return opts.final ? 'drop' : 'retry';
    },
    sleep: () => {
      retries++;
      return turn();
    },
  });
  return { calls, projection, records, failed, retries: () => retries };
}

describe('BatchedRecords', () => {
  it('intents of services reconciling at the same time share one transaction', async () => {
    const h = harness();
    await Promise.all([
      h.records.recordIntent('default', 'web', { decisions: [decision('web')], pending: [{ key: 'k-web' }] }),
      h.records.recordIntent('default', 'api', { pending: [{ key: 'k-api' }] }),
    ]);
    expect(h.calls).toEqual(['intents web,api']);
  });

  it('confirmations resolve at once and are written behind together, the newest per key', async () => {
    const h = harness();
    await h.records.recordPublished([view('k-web', 1)], []);
    await h.records.recordPublished([view('k-api', 2)], ['k-old']);
    await h.records.recordPublished([view('k-web', 3)], []);
    await h.records.recordPublished([view('k-old', 4)], ['k-api']);
    await h.records.recordPublished([], []);
    expect(h.calls).toEqual([]);
    expect(await h.records.close()).toBe(0);
    expect(h.calls).toEqual(['published k-web@3,k-old@4 -k-api']);
  });

  it('a failed confirmation write is retried with what it carried, under the newer confirmations of its keys', async () => {
    const h = harness({ failures: 1 });
    await h.records.recordPublished([view('a', 1), view('b', 1)], ['c']);
    await turn();
    // The first write is in flight (and fails); meanwhile a newer revision of `a` arrives.
    await h.records.recordPublished([view('a', 2)], []);
    expect(await h.records.close()).toBe(0);
    expect(h.calls).toEqual(['published a@1,b@1 -c', 'published a@2,b@1 -c']);
    expect([h.failed.length, h.retries()]).toEqual([1, 1]);
  });

  it('a final failure (a lost lease) drops every unwritten confirmation and takes no more', async () => {
    const h = harness({ failures: 1, final: true });
    await h.records.recordPublished([view('a', 1)], []);
    await turn();
    await turn();
    await h.records.recordPublished([view('b', 1)], []);
    expect(await h.records.close()).toBe(0);
    expect(h.calls).toEqual(['published a@1 -']);
    expect(h.retries()).toBe(0);
  });

  it('close gives up after a few failed attempts and says how many keys it left unwritten', async () => {
    const h = harness({ failures: 100 });
    await h.records.recordPublished([view('a', 1), view('b', 1)], ['c']);
    expect(await h.records.close()).toBe(3);
    const attempts = h.calls.length;
    await h.records.recordPublished([view('d', 1)], []);
    await turn();
    await turn();
    expect(h.calls.length).toBe(attempts);
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
    const h = harness({ intentsFail: true });
    await expect(h.records.recordIntent('default', 'web', { decisions: [decision('web')], pending: [] })).rejects.toThrow(/down/);
    expect(h.projection.decisions('default/web')).toEqual([]);
  });
});
