// The three consumers' message handlers: parse strictly, apply in one transaction with the
// offset, then say what became dirty. Malformed input is dead-lettered with its reason and
// terminated; any other failure throws, so the message is redelivered with backoff (the
// consumers run with one message in flight, which keeps the offset guard sound).

import type { Node, Service } from '@slicemesh/model';
import type { ConsumedMessage, DeadLetter, HandlerOutcome, SubjectOptions } from '@slicemesh/nats';
import type { KubeEnvelope, SliceChangedV1 } from './messages.ts';
import { MalformedMessageError, parseNodeEvent, parseServiceEvent, parseSliceChanged } from './messages.ts';
import type { IngestStore } from './ports.ts';

export type ConsumerRole = 'slices' | 'nodes' | 'services';

/** What a handled message led to; the service counts and logs it. */
export type IngestOutcome =
  | { readonly result: 'applied' | 'duplicate'; readonly role: ConsumerRole; readonly seq: number }
  | { readonly result: 'dead-lettered'; readonly role: ConsumerRole; readonly seq: number; readonly reason: string; readonly field?: string };

export interface IngestDeps extends SubjectOptions {
  readonly cluster: string;
  readonly store: IngestStore;
  /** Offset names in consumer_offsets, per role. */
  readonly offsets: Readonly<Record<ConsumerRole, string>>;
  /** Publishes a dead letter to dlq.<cluster>.hints; throws when it could not. */
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
  /** Slices of a service changed (after commit, also for redeliveries). */
  readonly onSlices: (msg: SliceChangedV1) => void;
  /** A node event (after commit, also for redeliveries; applying it must be idempotent). */
  readonly onNode: (env: KubeEnvelope<Node>) => void;
  /** A service event (after commit, also for redeliveries). */
  readonly onService: (env: KubeEnvelope<Service>) => void;
  /** Reports every handled message. */
  readonly report?: (outcome: IngestOutcome) => void;
}

export interface IngestHandlers {
  readonly slices: (msg: ConsumedMessage) => Promise<HandlerOutcome>;
  readonly nodes: (msg: ConsumedMessage) => Promise<HandlerOutcome>;
  readonly services: (msg: ConsumedMessage) => Promise<HandlerOutcome>;
}

/**
 * Builds the handlers. The after-commit callbacks also run for a redelivery of an applied
 * message: the commit may have succeeded while its acknowledgement to us was lost.
 */
export function ingestHandlers(deps: IngestDeps): IngestHandlers {
  const opts = { cluster: deps.cluster, ...(deps.prefix !== undefined ? { prefix: deps.prefix } : {}) };

  function handler<T>(
    role: ConsumerRole,
    parse: (data: unknown, subject: string) => T,
    apply: (consumer: string, seq: number, parsed: T) => Promise<boolean>,
    after: (parsed: T) => void,
  ): (msg: ConsumedMessage) => Promise<HandlerOutcome> {
    return async (msg) => {
      let parsed: T;
      try {
        if (msg.parseError !== undefined) throw new MalformedMessageError(`the body is not JSON: ${msg.parseError}`, '<body>');
        parsed = parse(msg.data, msg.subject);
      } catch (err) {
        if (!(err instanceof MalformedMessageError)) throw err;
        await deps.deadLetter({ reason: err.reason, ...(err.field !== undefined ? { field: err.field } : {}), object: msg.raw, subject: msg.subject });
        deps.report?.({ result: 'dead-lettered', role, seq: msg.seq, reason: err.reason, ...(err.field !== undefined ? { field: err.field } : {}) });
        return 'term';
      }
      const applied = await apply(deps.offsets[role], msg.seq, parsed);
      after(parsed);
      deps.report?.({ result: applied ? 'applied' : 'duplicate', role, seq: msg.seq });
      return 'ack';
    };
  }

  return {
    slices: handler('slices', (d, s) => parseSliceChanged(d, s, opts), (c, q, m) => deps.store.applySliceChanged(c, q, m), deps.onSlices),
    nodes: handler('nodes', (d, s) => parseNodeEvent(d, s, opts), (c, q, e) => deps.store.applyNodeEvent(c, q, e), deps.onNode),
    services: handler('services', (d, s) => parseServiceEvent(d, s, opts), (c, q, e) => deps.store.applyServiceEvent(c, q, e), deps.onService),
  };
}
