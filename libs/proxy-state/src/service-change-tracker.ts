// The agent's Service state, shaped as a diff (upstream ServiceChangeTracker): per service
// the port map before the first unsynced change and after the latest one. A change that
// ends where it started is dropped, so a no-op update never wakes the sync runner.

import type { IPFamily, Service } from '@slicemesh/model';
import { deepEqual } from './deep-equal.ts';
import { sortedMap } from './order.ts';
import type { ServicePortInfo } from './service-port.ts';
import { proxiedServicePorts, servicePortKey } from './service-port.ts';

/** Per `<ns>/<svc>:<portName>/<proto>`, the programmed port (see `proxiedServicePorts`). */
export type ServicePortMap = ReadonlyMap<string, ServicePortInfo>;

export interface ServiceChange {
  readonly previous: ServicePortMap;
  readonly current: ServicePortMap;
}

function portMapOf(service: Service | null, family: IPFamily): ServicePortMap {
  const out = new Map<string, ServicePortInfo>();
  if (service) for (const p of proxiedServicePorts(service, family)) out.set(servicePortKey(p), p);
  return out;
}

export class ServiceChangeTracker {
  private readonly family: IPFamily;
  private readonly changes = new Map<string, ServiceChange>();

  constructor(family: IPFamily) {
    this.family = family;
  }

  /**
   * Records `previous` -> `current` for one service (null for add / delete). Returns whether
   * any change is pending afterwards (not only this one), as upstream does: false means the
   * runner need not be woken.
   */
  update(previous: Service | null, current: Service | null): boolean {
    const svc = current ?? previous;
    if (!svc) return this.changes.size > 0;
    const key = `${svc.metadata.namespace ?? 'default'}/${svc.metadata.name}`;
    const before = this.changes.get(key)?.previous ?? portMapOf(previous, this.family);
    const after = portMapOf(current, this.family);
    if (deepEqual(before, after)) this.changes.delete(key);
    else this.changes.set(key, { previous: before, current: after });
    return this.changes.size > 0;
  }

  /** Number of services with pending changes. */
  get pendingCount(): number {
    return this.changes.size;
  }

  /** Returns and clears the pending changes, per `<ns>/<name>` in key order. */
  checkoutChanges(): Map<string, ServiceChange> {
    const out = sortedMap(this.changes);
    this.changes.clear();
    return out;
  }
}
