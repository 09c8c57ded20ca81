// The JetStream domain a connection's streams and buckets live in. A service that runs beside
// one server but reads another's JetStream — a central slicer on the hub reading a leaf's KUBE,
// an agent on the hub reading its leaf's views — names that domain once (NATS_JS_DOMAIN), and
// every JetStream context made for its connection here addresses it.

import { jetstream as driverJetstream, jetstreamManager as driverJetstreamManager } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager, JetStreamManagerOptions, JetStreamOptions } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

const domains = new WeakMap<NatsConnection, string>();

/** Every JetStream context of `nc` (made by this library) addresses `domain`. */
export function setJetStreamDomain(nc: NatsConnection, domain: string): void {
  domains.set(nc, domain);
}

/** The connection's JetStream domain, or undefined for the connected server's own. */
export function jetStreamDomainOf(nc: NatsConnection): string | undefined {
  return domains.get(nc);
}

const withDomain = <T extends { domain?: string }>(nc: NatsConnection, opts: T | undefined): T | undefined => {
  const domain = domains.get(nc);
  return domain === undefined || opts?.domain !== undefined ? opts : ({ ...opts, domain } as T);
};

/** A JetStream client of `nc`, in its domain unless `opts` names another. */
export function jetstream(nc: NatsConnection, opts?: JetStreamOptions): JetStreamClient {
  return driverJetstream(nc, withDomain(nc, opts));
}

/** A JetStream manager of `nc`, in its domain unless `opts` names another. */
export function jetstreamManager(nc: NatsConnection, opts?: JetStreamManagerOptions): Promise<JetStreamManager> {
  return driverJetstreamManager(nc, withDomain(nc, opts));
}
