// The events the recorder correlates and the keys it groups them by (A.13.1-A.13.3). The keys
// are client-go's: which fields make two events "the same object", "similar" or "identical".

/** The object an event is about, as the Event's involvedObject. */
export interface EventObject {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

/** One event as a controller records it, before correlation. */
export interface ObservedEvent {
  /** The reporting component (`source.component`). */
  readonly component: string;
  readonly object: EventObject;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

// A separator no Kubernetes name, kind or reason contains, so distinct field lists never
// produce the same key (client-go joins with nothing; we would rather not collide).
const SEP = '\u0000';

const objectKey = (e: ObservedEvent): string[] => [e.component, '', e.object.kind, e.object.namespace, e.object.name, e.object.uid ?? '', e.object.apiVersion];

/** Source and object (A.13.1): one spam bucket per key, whatever the reason or message. */
export function spamKey(e: ObservedEvent): string {
  return objectKey(e).join(SEP);
}

/** Source, object, type and reason (A.13.2): events equal under it differ only in message. */
export function aggregateKey(e: ObservedEvent): string {
  // Reporting controller and instance: the component, and no instance, as source.host is empty.
  return [...objectKey(e), e.type, e.reason, e.component, ''].join(SEP);
}

/** Everything that identifies an event (A.13.3): equal keys are the same Event, counted. */
export function eventKey(e: ObservedEvent): string {
  // The object's field path is always empty here, kept in its place for the record.
  return [...objectKey(e).slice(0, 5), '', e.object.uid ?? '', e.object.apiVersion, e.type, e.reason, e.message].join(SEP);
}
