import { describe, expect, it } from 'vitest';
import { FeedOrder, feedPositionOf } from './feed-order.ts';

describe('feedPositionOf', () => {
  const cases: { name: string; reply: string | undefined; want: ReturnType<typeof feedPositionOf> }[] = [
    { name: 'the 2.9 form: stream and consumer sequences', reply: '$JS.ACK.KV_views.feed-ab.1.42.7.1795807637779442244.0', want: { streamSeq: 42, consumerSeq: 7 } },
    { name: 'the domain form with its random token', reply: '$JS.ACK.hub.ACCHASH.KV_views.feed-ab.1.42.7.1795807637779442244.0.tok', want: { streamSeq: 42, consumerSeq: 7 } },
    { name: 'the domain form without the token', reply: '$JS.ACK.hub.ACCHASH.KV_views.feed-ab.1.43.8.1795807637779442244.3', want: { streamSeq: 43, consumerSeq: 8 } },
    { name: 'no reply (a heartbeat, a plain message)', reply: undefined, want: null },
    { name: 'a reply that is not an ack subject', reply: '_INBOX.abc.def', want: null },
    { name: 'too few tokens', reply: '$JS.ACK.KV_views.feed-ab.1.42', want: null },
    { name: 'sequences that are not numbers', reply: '$JS.ACK.KV_views.feed-ab.1.x.y.1.0', want: null },
    { name: 'sequence zero', reply: '$JS.ACK.KV_views.feed-ab.1.0.1.1.0', want: null },
  ];
  for (const tc of cases) it(tc.name, () => expect(feedPositionOf(tc.reply)).toEqual(tc.want));
});

describe('FeedOrder', () => {
  type Step = readonly ['message' | 'heartbeat', number, 'in-order' | 'missed'];
  const cases: { name: string; steps: readonly Step[] }[] = [
    { name: 'the first delivery sets the base, whatever its number', steps: [['message', 17, 'in-order'], ['message', 18, 'in-order']] },
    { name: 'a skipped number is a miss, and the count goes on from it', steps: [['message', 1, 'in-order'], ['message', 3, 'missed'], ['message', 4, 'in-order']] },
    { name: 'a repeated or smaller number (the consumer was recreated) is a miss', steps: [['message', 5, 'in-order'], ['message', 1, 'missed'], ['message', 2, 'in-order']] },
    { name: 'a heartbeat before any delivery sets the base', steps: [['heartbeat', 9, 'in-order'], ['message', 10, 'in-order']] },
    { name: 'a heartbeat counting deliveries not seen is a miss', steps: [['message', 4, 'in-order'], ['heartbeat', 6, 'missed'], ['message', 7, 'in-order']] },
    { name: 'a heartbeat counting fewer (a new consumer) is a miss', steps: [['message', 4, 'in-order'], ['heartbeat', 0, 'missed'], ['message', 1, 'in-order']] },
    { name: 'a heartbeat agreeing with the last delivery is in order', steps: [['message', 4, 'in-order'], ['heartbeat', 4, 'in-order'], ['heartbeat', 4, 'in-order']] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const order = new FeedOrder();
      expect(tc.steps.map(([kind, seq]) => (kind === 'message' ? order.message(seq) : order.heartbeat(seq)))).toEqual(tc.steps.map((s) => s[2]));
      expect(order.last).toBe(tc.steps.at(-1)?.[1]);
    });
  }
});
