// The consumers' batch handlers: parse strictly, stage against the in-memory state, store
// the batch's rows with the consumer's offset in one transaction, apply them in memory, then say
// what became dirty. Malformed input is dead-lettered with its reason and acknowledged with its
// batch (the dead letter holds it now); any other failure throws, so the batch is consumed again
// from the offset held in memory (which equals the stored one: memory changes only after the
// commit).
//
// Several watcher replicas publish KUBE (docs/architecture.md, "Watcher replicas"): the stream
// drops identical versions inside its duplicate window, but a replica that lags past it, or a
// delete one replica synthesised from its re-list, can land after a newer version. Every KUBE
// object is therefore folded by resourceVersion (`VersionFloors`, node-topology.ts): a version
// that does not supersede the newest one taken for that object — live or deleted — is 'stale',
// changes nothing and is not handed on. The projection's own checks against the object held
// cannot see a delete (nothing is held after one); the floors keep the tombstone.
//
// Several replicas share the cluster by KUBE partition (hints-service.ts): the handlers of one
// partition write through a store that carries its lease, read their partition's services and
// foreign slices, every node (the node floors are shared by the engine's node consumers, so the
// second consumer to see a node version finds it stale), and their partition's slice changes (its
// token in the SLICES subject). A consumer that reads every partition's changes (while SLICES
// still holds older-form subjects without the token, consumers.ts) skips other partitions'
// namespaces ('foreign-partition': the offset moves past them, nothing else).

import type { EndpointSlice, Node, ObjectVersion, Service } from '@slicemesh/model';
import { misfiledPartition, parseSlicesSubject } from '@slicemesh/contracts';
import type { ConsumedMessage, DeadLetter, HandlerOutcome, SubjectOptions } from '@slicemesh/nats';
import type { KubeEnvelope, SliceChangedV1 } from './messages.ts';
import { MalformedMessageError, parseEndpointSliceEvent, parseNodeEvent, parseServiceEvent, parseSliceChanged } from './messages.ts';
import { VersionFloors } from './node-topology.ts';
import type { HintsProjection, IngestStage } from './projection.ts';
import type { IngestStore } from './ports.ts';
import type { ServiceKey } from './published-index.ts';

/** slices: SLICES; nodes, services: KUBE; endpointslices: other controllers' slices from KUBE. */
export type ConsumerRole = 'slices' | 'nodes' | 'services' | 'endpointslices';

/** What a handled message led to; the service counts and logs it. */
export type IngestOutcome =
  /** stale: older than (or the same as) the version of that object already taken, e.g. from a lagging watcher replica. */
  /** foreign-partition: a slice change of a namespace another partition's owner handles. */
  | { readonly result: 'applied' | 'duplicate' | 'stale' | 'foreign-partition'; readonly role: ConsumerRole; readonly seq: number }
  | { readonly result: 'dead-lettered'; readonly role: ConsumerRole; readonly seq: number; readonly reason: string; readonly field?: string };

export interface IngestDeps extends SubjectOptions {
  readonly cluster: string;
  /** The in-memory state: where each message is staged and, once stored, applied. */
  readonly projection: HintsProjection;
  readonly store: IngestStore;
  /** Offset names in consumer_offsets, per role. */
  readonly offsets: Readonly<Record<ConsumerRole, string>>;
  /** Publishes a dead letter to dlq.<cluster>.hints; throws when it could not. */
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
  /** Slices of a service changed (after the commit; also for redeliveries). */
  readonly onSlices: (msg: SliceChangedV1) => void;
  /** A node event (after the commit; also for redeliveries and stale versions, so it must be idempotent). */
  readonly onNode: (env: KubeEnvelope<Node>) => void;
  /** A service event (after the commit; also for redeliveries). */
  readonly onService: (env: KubeEnvelope<Service>) => void;
  /** Another controller's slice changed (after the commit; also for redeliveries and stale versions). */
  readonly onForeignSlice: (env: KubeEnvelope<EndpointSlice>) => void;
  /** A service lost a foreign slice to another service (its service-name label changed); after the commit. */
  readonly onVacated?: (key: ServiceKey) => void;
  /** After the callbacks of a batch that had any message to hand on. */
  readonly afterBatch?: (role: ConsumerRole) => void;
  /** Reports every handled message. */
  readonly report?: (outcome: IngestOutcome) => void;
  /** Whether a namespace is this consumer's partition's (a broad SLICES consumer reads every partition's). Default: all. */
  readonly owns?: (namespace: string) => boolean;
  /** PARTITIONS, which a SLICES subject's partition token is checked against. Default: not checked. */
  readonly partitions?: number;
  /** Node versions taken, shared by every node consumer feeding the same projection. Default: the handler's own. */
  readonly nodeFloors?: VersionFloors;
}

/** Per role: handles one batch, in stream order; resolves 'ack' for the whole batch. */
export type IngestHandlers = Readonly<Record<ConsumerRole, (msgs: readonly ConsumedMessage[]) => Promise<HandlerOutcome>>>;

interface Kind<T> {
  readonly parse: (data: unknown, subject: string) => T;
  readonly stage: (stage: IngestStage, parsed: T) => void;
  readonly after: (parsed: T) => void;
  /** The object a KUBE message is about and its version (ordered by VersionFloors); none for SLICES. */
  readonly version?: (parsed: T) => { readonly key: string; readonly version: ObjectVersion };
  /**
   * false: another partition's message by its subject, skipped before its body is read. Enough
   * on its own: `parse` rejects a body its subject does not name. Default: every message is this
   * consumer's.
   */
  readonly mine?: (subject: string) => boolean;
  /** The floors to order versions by (default: the handler's own). */
  readonly floors?: VersionFloors;
}

/** A KUBE envelope's object key and version. */
function envelopeVersion(env: KubeEnvelope<{ readonly metadata: { readonly namespace?: string; readonly name: string; readonly resourceVersion?: string } }>): { key: string; version: ObjectVersion } {
  const m = env.object.metadata;
  return { key: `${m.namespace ?? ''}/${m.name}`, version: { resourceVersion: m.resourceVersion ?? '', deleted: env.type === 'Deleted.v1' } };
}

/**
 * Builds the handlers. A redelivery of an applied message (seq ≤ the offset) is acked without a
 * write but still handed on: its first handling may have been cut short after the commit.
 */
export function ingestHandlers(deps: IngestDeps): IngestHandlers {
  const opts = { cluster: deps.cluster, ...(deps.prefix !== undefined ? { prefix: deps.prefix } : {}), ...(deps.partitions !== undefined ? { partitions: deps.partitions } : {}) };
  const owns = deps.owns;

  function handler<T>(role: ConsumerRole, kind: Kind<T>): (msgs: readonly ConsumedMessage[]) => Promise<HandlerOutcome> {
    const consumer = deps.offsets[role];
    const floors = kind.floors ?? new VersionFloors();
    return async (msgs) => {
      const stage = deps.projection.stage();
      const staged = floors.stage();
      const reports: IngestOutcome[] = [];
      const handOn: T[] = [];
      let commit = false;
      /** The highest sequence applied or dead-lettered: what a commit covers. */
      let last = 0;
      for (const msg of msgs) {
        // Another partition's by its subject: skipped unread (the owner's consumer parses it,
        // and dead-letters it if its body does not match the subject).
        const foreign = kind.mine !== undefined && !kind.mine(msg.subject);
        if (msg.seq <= deps.projection.offset(consumer)) {
          const parsed = foreign ? undefined : tryParse(kind, msg);
          if (parsed !== undefined) handOn.push(parsed);
          reports.push({ result: 'duplicate', role, seq: msg.seq });
          continue;
        }
        if (foreign) {
          // Covered by the batch's commit when it has one. A batch of nothing else writes
          // nothing: a consumer reading all of SLICES would otherwise commit for other
          // partitions' changes. The stored offset stays behind them, and a restart reads them
          // again only to skip them again.
          reports.push({ result: 'foreign-partition', role, seq: msg.seq });
          last = msg.seq;
          continue;
        }
        let parsed: T;
        try {
          if (msg.parseError !== undefined) throw new MalformedMessageError(`the body is not JSON: ${msg.parseError}`, '<body>');
          parsed = kind.parse(msg.data, msg.subject);
        } catch (err) {
          if (!(err instanceof MalformedMessageError)) throw err;
          await deps.deadLetter({ reason: err.reason, ...(err.field !== undefined ? { field: err.field } : {}), object: msg.raw, subject: msg.subject });
          reports.push({ result: 'dead-lettered', role, seq: msg.seq, reason: err.reason, ...(err.field !== undefined ? { field: err.field } : {}) });
          last = msg.seq;
          continue;
        }
        const v = kind.version?.(parsed);
        if (v !== undefined && !staged.take(v.key, v.version)) {
          // Covered by the commit (the offset moves past it), so a restart does not see it again.
          reports.push({ result: 'stale', role, seq: msg.seq });
          commit = true;
          last = msg.seq;
          continue;
        }
        kind.stage(stage, parsed);
        handOn.push(parsed);
        commit = true;
        last = msg.seq;
        reports.push({ result: 'applied', role, seq: msg.seq });
      }
      // A batch of dead letters only writes nothing (they are in the DLQ); otherwise the commit
      // covers them too. Stored false: an earlier attempt committed and lost its
      // acknowledgement; the rows are the same either way, so memory takes them too.
      if (commit) {
        await deps.store.commitIngest(consumer, last, stage.rows());
        stage.apply(consumer, last);
        staged.apply();
        for (const key of stage.vacated()) deps.onVacated?.(key);
      }
      for (const parsed of handOn) kind.after(parsed);
      if (handOn.length > 0) deps.afterBatch?.(role);
      for (const r of reports) deps.report?.(r);
      return 'ack';
    };
  }

  return {
    slices: handler<SliceChangedV1>('slices', {
      parse: (d, s) => parseSliceChanged(d, s, opts),
      stage: (stage, msg) => stage.applySliceChanged(msg),
      after: deps.onSlices,
      ...(owns !== undefined ? { mine: (subject: string) => ownsSlicesSubject(subject, opts, owns) } : {}),
    }),
    nodes: handler<KubeEnvelope<Node>>('nodes', {
      parse: (d, s) => parseNodeEvent(d, s, opts),
      stage: (stage, env) => stage.applyNode(env),
      after: deps.onNode,
      version: envelopeVersion,
      ...(deps.nodeFloors !== undefined ? { floors: deps.nodeFloors } : {}),
    }),
    services: handler<KubeEnvelope<Service>>('services', {
      parse: (d, s) => parseServiceEvent(d, s, opts), stage: (stage, env) => stage.applyService(env), after: deps.onService, version: envelopeVersion,
    }),
    endpointslices: handler<KubeEnvelope<EndpointSlice>>('endpointslices', {
      parse: (d, s) => parseEndpointSliceEvent(d, s, opts),
      stage: (stage, env) => stage.applyForeignSlice(env),
      after: deps.onForeignSlice,
      version: envelopeVersion,
    }),
  };
}

/**
 * Whether this consumer takes a SLICES message, from its subject: its namespace is `owns`'s. A
 * subject that does not parse, or whose partition token is not its namespace's, is taken too:
 * its parse dead-letters it (skipped as another partition's, it would be lost, since the
 * partition its namespace belongs to filters on its own token and never receives it).
 */
function ownsSlicesSubject(subject: string, opts: SubjectOptions & { readonly partitions?: number }, owns: (namespace: string) => boolean): boolean {
  try {
    const a = parseSlicesSubject(subject, opts);
    return owns(a.namespace) || misfiledPartition(a, opts.partitions) !== undefined;
  } catch {
    return true;
  }
}

function tryParse<T>(kind: Kind<T>, msg: ConsumedMessage): T | undefined {
  if (msg.parseError !== undefined) return undefined;
  try {
    return kind.parse(msg.data, msg.subject);
  } catch {
    return undefined;
  }
}
