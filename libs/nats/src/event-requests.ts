// Publishing Kubernetes Event requests (EventRequest.v1) to the EVENTS stream, fire-and-forget.
// Events are best effort, as in Kubernetes (client-go's recorder drops events when its queue is
// full, A.13.4): a reconcile hands its events over after its state is committed and never waits
// for them or fails because of them. The caller counts and logs the outcomes (habit 15).

import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { eventsSubject } from '@slicemesh/contracts';
import type { EventRequestMessage } from '@slicemesh/contracts';
import { publishAcked } from './publish.ts';

/** What became of one request. */
export type EventEmitResult =
  | { readonly outcome: 'published'; readonly request: EventRequestMessage; readonly seq: number; readonly duplicate: boolean }
  /** The stream did not take it (no stream, timeout, …); the event is lost. */
  | { readonly outcome: 'failed'; readonly request: EventRequestMessage; readonly error: string }
  /** Too many requests were in flight already; dropped without trying. */
  | { readonly outcome: 'dropped'; readonly request: EventRequestMessage };

export interface EventRequestPublisherOptions {
  /** Stream subject prefix (see SubjectOptions). */
  readonly prefix: string;
  /** Requests in flight at once before new ones are dropped. Defaults to 1000 (client-go's queue length). */
  readonly maxInFlight?: number;
  /** Wait for each ack, ms. Defaults to 5000. */
  readonly timeoutMs?: number;
  /** Called once per request with its outcome. */
  readonly onResult?: (r: EventEmitResult) => void;
}

export interface EventRequestPublisher {
  /** Starts publishing `request` and returns at once; never throws. */
  emit(request: EventRequestMessage): void;
  /** Resolves once every request emitted so far has an outcome (close, tests). */
  flush(): Promise<void>;
}

/** Nats-Msg-Id of a request: its content, so a request published twice (a retry) is stored once. */
export function eventRequestMsgId(subject: string, request: EventRequestMessage): string {
  return `${request.cluster}/event/${createHash('sha256').update(subject).update('\n').update(JSON.stringify(request)).digest('hex').slice(0, 32)}`;
}

/**
 * A fire-and-forget publisher of event requests to `events.<cluster>.<component>`.
 *
 * ### Examples
 * ```ts
 * const events = eventRequestPublisher(js, { prefix: names.prefix, onResult: (r) => count(r.outcome) });
 * events.emit(eventRequest(cluster, MIRRORING_EVENT_COMPONENT, ref, ev, clock.now()));
 * ```
 */
export function eventRequestPublisher(js: JetStreamClient, opts: EventRequestPublisherOptions): EventRequestPublisher {
  const maxInFlight = opts.maxInFlight ?? 1000;
  const inFlight = new Set<Promise<void>>();
  const report = (r: EventEmitResult): void => {
    try {
      opts.onResult?.(r);
    } catch {
      // A failing observer must not turn a best-effort publish into an unhandled rejection.
    }
  };
  return {
    emit(request) {
      if (inFlight.size >= maxInFlight) return report({ outcome: 'dropped', request });
      let subject: string;
      try {
        subject = eventsSubject({ cluster: request.cluster, component: request.component }, { prefix: opts.prefix });
      } catch (err) {
        return report({ outcome: 'failed', request, error: err instanceof Error ? err.message : String(err) });
      }
      const p = publishAcked(js, subject, request, { msgID: eventRequestMsgId(subject, request), timeoutMs: opts.timeoutMs ?? 5000, retries: 1 })
        .then((ack) => report({ outcome: 'published', request, seq: ack.seq, duplicate: ack.duplicate }))
        .catch((err: unknown) => report({ outcome: 'failed', request, error: err instanceof Error ? err.message : String(err) }))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    async flush() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  };
}
