// The hints decisions' Kubernetes Events (A.13.5): each decision that carries upstream's event
// (TopologyAwareHintsEnabled/Disabled) becomes an Event request on the Service, reported by the
// EndpointSlice controller, sent to EVENTS once the reconcile that made it has written its
// state. The publisher's event writer records them; sending is fire-and-forget and counted.

import type { Service } from '@slicemesh/model';
import type { EventRequestMessage, JetStreamClient } from '@slicemesh/nats';
import { HINTS_EVENT_COMPONENT, eventRequest, eventRequestPublisher } from '@slicemesh/nats';
import type { Clock, Logger, Metrics } from '@slicemesh/runtime';
import type { HintsDecision } from '@slicemesh/topology';
import type { ServiceKey } from './published-index.ts';
import { splitServiceKey } from './published-index.ts';

/** One request per decision with an event, on the Service `key` (`<ns>/<name>`); pure. */
export function hintsEventRequests(cluster: string, key: ServiceKey, service: Service | undefined, decisions: readonly HintsDecision[], nowMs: number): EventRequestMessage[] {
  const { namespace, name } = splitServiceKey(key);
  const uid = service?.metadata.uid;
  const ref = { kind: 'Service', apiVersion: 'v1', namespace, name, ...(uid ? { uid } : {}) };
  return decisions.flatMap((d) => (d.event === null ? [] : [eventRequest(cluster, HINTS_EVENT_COMPONENT, ref, d.event, nowMs)]));
}

export interface HintsEvents {
  /** Sends the events of one finished reconcile; returns at once, never throws. */
  emit(key: ServiceKey, service: Service | undefined, decisions: readonly HintsDecision[]): void;
  /** Waits for what was sent (close). */
  flush(): Promise<void>;
}

export interface HintsEventsOptions {
  readonly cluster: string;
  /** Stream subject prefix. */
  readonly prefix: string;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly log: Logger;
}

/** The port hints-service.ts calls after each reconcile. */
export function hintsEvents(js: JetStreamClient, opts: HintsEventsOptions): HintsEvents {
  const sent = opts.metrics.counter({
    name: 'hints_event_requests_total',
    help: 'Topology hints Event requests sent to EVENTS after their reconcile, by outcome (published; failed or dropped: the Event is lost, best effort).',
    labelNames: ['outcome'],
  });
  const publisher = eventRequestPublisher(js, {
    prefix: opts.prefix,
    onResult: (r) => {
      sent.inc({ outcome: r.outcome });
      if (r.outcome !== 'published') {
        opts.log.warn({ service: `${r.request.involvedObject.namespace}/${r.request.involvedObject.name}`, reason: r.request.event.reason, outcome: r.outcome, ...(r.outcome === 'failed' ? { error: r.error } : {}) }, 'Event request not published; the Event is lost');
      }
    },
  });
  return {
    emit(key, service, decisions) {
      for (const req of hintsEventRequests(opts.cluster, key, service, decisions, opts.clock.now())) publisher.emit(req);
    },
    flush: () => publisher.flush(),
  };
}
