// The agent's own Node, read from the log rather than the Kubernetes API: the watcher already
// publishes every Node to KUBE (`kube.<cluster>.node.<name>`), so each agent follows only its
// own subject — the last message first, then every new one — and turns what it reads into a
// zone decision (node-zone.ts). A thousand agents thus add one small consumer each to NATS and
// nothing to the API server, and need no Kubernetes token.
//
// Several watcher replicas may publish the subject (docs/architecture.md, "Watcher replicas"),
// so its messages are folded by resourceVersion as the slicer's ClusterState folds them
// (`supersedes`): a lagging replica's older version, landing after a newer one, is ignored
// instead of moving the agent back to the old zone. The same version again (the last message
// re-read when following resumes) is observed again, which changes nothing.

import type { DecodeContext, RawKubeMessage } from '@slicemesh/contracts';
import { DELETED, decodeKubeMessage } from '@slicemesh/contracts';
import type { ObjectVersion } from '@slicemesh/model';
import { supersedes } from '@slicemesh/model';
import type { Clock, Logger } from '@slicemesh/runtime';
import { exponentialBackoff } from '@slicemesh/runtime';
import type { NodeObservation, ZoneDecision } from './node-zone.ts';
import { describeZoneDecision, nextZoneDecision } from './node-zone.ts';

/** The KUBE messages of one Node (followSubject satisfies it over the Node's subject). */
export interface NodeMessageSource {
  /**
   * Yields the last message stored for the Node (none when there is none), then every new one;
   * calls `onInitialDone` once the stored one was handled (at once without one). Ends when
   * `signal` aborts; rejects when the log cannot be read.
   */
  follow(opts: { readonly onInitialDone: () => void; readonly signal: AbortSignal }): AsyncIterable<RawKubeMessage>;
}

export interface NodeFollowerOptions {
  /** Cluster and subject prefix the messages must carry (decodeKubeMessage). */
  readonly decode: DecodeContext;
  readonly nodeName: string;
  readonly source: NodeMessageSource;
  /** The decision before anything was read (initialZoneDecision). */
  readonly initial: ZoneDecision;
  /** Told every new decision (the zone, or only what is known of the Node, changed). */
  readonly onDecision: (next: ZoneDecision, previous: ZoneDecision) => void;
  readonly clock: Clock;
  readonly log: Logger;
  /** Delay before following again after a failure, by attempt. Defaults to 1 s doubling to 30 s. */
  readonly restartDelay?: (attempt: number) => number;
}

export class NodeFollower {
  readonly #o: NodeFollowerOptions;
  #decision: ZoneDecision;
  /** The newest version of the Node observed (a delete included); undefined before the first. */
  #version: ObjectVersion | undefined;
  /** What that newest version said. */
  #newest: NodeObservation | undefined;

  constructor(opts: NodeFollowerOptions) {
    this.#o = opts;
    this.#decision = opts.initial;
  }

  get decision(): ZoneDecision {
    return this.#decision;
  }

  /**
   * Applies one message of the Node's subject. A message that does not decode, or is about
   * another object, is logged and changes nothing; returns whether it was an observation. One
   * older than the newest observed (a lagging watcher replica's) is an observation of the Node
   * but changes nothing.
   */
  handle(msg: RawKubeMessage): boolean {
    const decoded = decodeKubeMessage(msg, this.#o.decode);
    if (!decoded.ok) {
      this.#o.log.warn({ subject: msg.subject, reason: decoded.rejection.reason, field: decoded.rejection.field }, 'ignored an unreadable message of this node');
      return false;
    }
    const c = decoded.change;
    if (c.object.kind !== 'Node' || c.name !== this.#o.nodeName) {
      this.#o.log.warn({ subject: msg.subject, kind: c.kind, name: c.name }, 'ignored a message about another object on this node\'s subject');
      return false;
    }
    const version: ObjectVersion = { resourceVersion: c.resourceVersion, deleted: c.type === DELETED };
    if (this.#version !== undefined && supersedes(this.#version, version)) {
      this.#o.log.debug({ subject: msg.subject, resourceVersion: c.resourceVersion, newest: this.#version.resourceVersion }, 'ignored an older version of this node (stale)');
      // Read again after a failure: what is known of the Node is the newest version's.
      if (this.#decision.node === 'unreachable' && this.#newest !== undefined) this.observe(this.#newest);
      return true;
    }
    this.#version = version;
    this.#newest = c.type === DELETED ? { kind: 'deleted' } : { kind: 'upserted', node: c.object };
    this.observe(this.#newest);
    return true;
  }

  /** Applies one observation; tells onDecision when the decision changed. */
  observe(obs: NodeObservation): void {
    const previous = this.#decision;
    const next = nextZoneDecision(previous, obs);
    if (next.zone === previous.zone && next.source === previous.source && next.node === previous.node) return;
    this.#decision = next;
    // A zone move is logged once by the agent when it is done; here only what changed about the Node.
    if (next.node !== previous.node && next.node !== 'present') this.#o.log.warn({ zone: next.zone, nodeStatus: next.node }, describeZoneDecision(next, this.#o.nodeName));
    else if (next.node !== previous.node && previous.node !== 'unread') this.#o.log.info({ zone: next.zone, nodeStatus: next.node }, describeZoneDecision(next, this.#o.nodeName));
    this.#o.onDecision(next, previous);
  }

  /** Follows the Node until `signal` aborts, following again after failures. */
  async run(signal: AbortSignal): Promise<void> {
    const delay = this.#o.restartDelay ?? exponentialBackoff({ baseMs: 1000, maxMs: 30_000 });
    for (let attempt = 0; !signal.aborted; attempt++) {
      let observed = false;
      let initial = true;
      try {
        const onInitialDone = () => {
          initial = false;
          // Nothing usable stored for the Node: keep the zone known so far (none at start).
          if (!observed) this.observe({ kind: 'absent' });
        };
        for await (const msg of this.#o.source.follow({ onInitialDone, signal })) {
          if (this.handle(msg)) observed = true;
          if (!initial) attempt = 0;
        }
        if (signal.aborted) return;
        this.#o.log.warn('node watch ended; following again');
      } catch (err) {
        if (signal.aborted) return;
        this.#o.log.warn({ err }, 'node watch failed; following again');
        this.observe({ kind: 'unreachable' });
      }
      await this.#sleep(delay(attempt), signal);
    }
  }

  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#o.clock.clearTimer(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.#o.clock.setTimer(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
