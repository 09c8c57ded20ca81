// What one cluster's multi-cluster service knows — its own Services, ServiceExports, slices and nodes, every
// cluster's exports and heartbeats — and what follows from it: the exports it must publish and
// the imports (derived Services and zone views) its agents must read. Pure: the service feeds
// it changes and writes the difference between what it wants and what it wrote.

import type { ServiceExportRecord, ServiceExportStatusEntry, ServiceImportEntry } from '@slicemesh/contracts';
import { exportKey, exportStatusKey, serviceImportKey, svcKey, viewKey } from '@slicemesh/contracts';
import type { EndpointSlice, Node, Service, ServiceExport } from '@slicemesh/model';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';
import { allocateClusterSetIp } from './derived-service.ts';
import { exportedSince, exportOf } from './export-of.ts';
import { exportStatusEntry, serviceExportConditions } from './export-status.ts';
import { importService } from './import-views.ts';
import type { ImportSource } from './import-views.ts';
import { liveClusters, nextExpiry } from './liveness.ts';
import type { MergedImport } from './merge-exports.ts';
import { serviceImportOf } from './service-import.ts';

export interface ClusterSetOptions {
  /** This cluster's id (as in subjects and keys). */
  readonly cluster: string;
  /** Where ClusterSet IPs come from (IPv4 CIDR). */
  readonly clusterSetCidr: string;
  /** A cluster whose last heartbeat is this old is withdrawn from every import, ms. */
  readonly ttlMs: number;
}

/** One import as this cluster sees it, for logs, metrics and tests. */
export interface ImportSummary {
  readonly namespace: string;
  readonly name: string;
  readonly derived: string;
  readonly clusterSetIp: string | null;
  readonly clusters: readonly string[];
  readonly source: ImportSource;
  readonly conflicts: readonly string[];
  /** The merged exports the import is made of (type, ports, session affinity). */
  readonly merged: MergedImport;
}

export interface DesiredImports {
  /** svc bucket key → derived Service. */
  readonly svc: ReadonlyMap<string, Service>;
  /** views bucket key → zone view of an imported slice. */
  readonly views: ReadonlyMap<string, EndpointSlice>;
  readonly imports: readonly ImportSummary[];
  /** The live clusters, this one included, sorted. */
  readonly live: readonly string[];
}

const nsName = (namespace: string, name: string): string => `${namespace}/${name}`;

export class ClusterSetState {
  readonly opts: ClusterSetOptions;
  readonly #services = new Map<string, Service>();
  /** MCS ServiceExports by ns/name: each exports the Service of the same ns/name. */
  readonly #serviceExports = new Map<string, ServiceExport>();
  /** Local slices by service (ns/name), then slice name. */
  readonly #slices = new Map<string, Map<string, EndpointSlice>>();
  readonly #nodes = new Map<string, Node>();
  /** Other clusters' exports by export key. */
  readonly #remote = new Map<string, ServiceExportRecord>();
  /** When each other cluster's heartbeat was last seen (ms, this process's clock). */
  readonly #heartbeats = new Map<string, number>();
  /** ClusterSet IP of each import (ns/name), kept while the import lasts. */
  readonly #ips = new Map<string, string>();

  constructor(opts: ClusterSetOptions) {
    this.opts = opts;
  }

  setService(namespace: string, name: string, service: Service | null): void {
    if (service === null) this.#services.delete(nsName(namespace, name));
    else this.#services.set(nsName(namespace, name), service);
  }

  setServiceExport(namespace: string, name: string, serviceExport: ServiceExport | null): void {
    if (serviceExport === null) this.#serviceExports.delete(nsName(namespace, name));
    else this.#serviceExports.set(nsName(namespace, name), serviceExport);
  }

  /** A local slice (from the hinted bucket): its Service is its service-name label. */
  setSlice(namespace: string, service: string, sliceName: string, slice: EndpointSlice | null): void {
    const key = nsName(namespace, service);
    let m = this.#slices.get(key);
    if (slice === null) {
      m?.delete(sliceName);
      if (m?.size === 0) this.#slices.delete(key);
      return;
    }
    if (m === undefined) this.#slices.set(key, (m = new Map()));
    m.set(sliceName, slice);
  }

  setNode(name: string, node: Node | null): void {
    if (node === null) this.#nodes.delete(name);
    else this.#nodes.set(name, node);
  }

  /** Another cluster's export; this cluster's own (echoed by the bucket) is ignored: it is computed here. */
  setRemoteExport(key: string, record: ServiceExportRecord | null, from: string): void {
    if (from === this.opts.cluster) return;
    if (record === null) this.#remote.delete(key);
    else this.#remote.set(key, record);
  }

  heartbeatSeen(cluster: string, at: number): void {
    if (cluster !== this.opts.cluster) this.#heartbeats.set(cluster, at);
  }

  /** An import's ClusterSet IP found in the svc bucket at start-up: kept, so a restart moves no IP. */
  adoptClusterSetIp(namespace: string, name: string, ip: string): void {
    this.#ips.set(nsName(namespace, name), ip);
  }

  /** The records this cluster must publish, by export key. */
  ownExports(): Map<string, ServiceExportRecord> {
    const out = new Map<string, ServiceExportRecord>();
    for (const [key, service] of this.#services) {
      const exportedAt = exportedSince(service, this.#serviceExports.get(key));
      if (exportedAt === undefined) continue;
      const r = exportOf({ cluster: this.opts.cluster, service, slices: [...(this.#slices.get(key)?.values() ?? [])], exportedAt });
      if (r !== null) out.set(exportKey(r), r);
    }
    return out;
  }

  /**
   * The status each of this cluster's ServiceExports should hold (by exportstatus key), given the
   * imports just computed: Valid, and Conflict with the conflicts of the Service's import.
   */
  exportStatuses(imports: DesiredImports, now: string): Map<string, ServiceExportStatusEntry> {
    const conflicts = new Map(imports.imports.map((i) => [nsName(i.namespace, i.name), i.conflicts]));
    const out = new Map<string, ServiceExportStatusEntry>();
    for (const [key, serviceExport] of this.#serviceExports) {
      const namespace = serviceExport.metadata.namespace ?? 'default';
      const name = serviceExport.metadata.name;
      const conditions = serviceExportConditions({ serviceExport, service: this.#services.get(key), conflicts: conflicts.get(key) ?? [], now });
      out.set(exportStatusKey({ cluster: this.opts.cluster, namespace, name }), exportStatusEntry(namespace, name, conditions));
    }
    return out;
  }

  /** The ServiceImport each import should have in this cluster (by serviceimports key), given the imports just computed. */
  serviceImports(imports: DesiredImports): Map<string, ServiceImportEntry> {
    const out = new Map<string, ServiceImportEntry>();
    for (const i of imports.imports) out.set(serviceImportKey({ cluster: this.opts.cluster, namespace: i.namespace, name: i.name }), serviceImportOf(i.merged, i.clusterSetIp));
    return out;
  }

  /** When the next other cluster would be withdrawn, for the caller's timer. */
  nextExpiry(now: number): number | undefined {
    return nextExpiry(this.#seen(), now, this.opts.ttlMs, this.opts.cluster);
  }

  #seen(): { cluster: string; seenAt: number }[] {
    return [...this.#heartbeats].map(([cluster, seenAt]) => ({ cluster, seenAt }));
  }

  /** The derived Services and zone views this cluster's agents must read, at `now`. */
  imports(now: number): DesiredImports {
    const live = liveClusters(this.#seen(), now, this.opts.ttlMs, this.opts.cluster);
    const groups = new Map<string, ServiceExportRecord[]>();
    const add = (r: ServiceExportRecord): void => {
      const k = nsName(r.namespace, r.name);
      const list = groups.get(k);
      if (list === undefined) groups.set(k, [r]);
      else list.push(r);
    };
    for (const r of this.ownExports().values()) add(r);
    for (const r of this.#remote.values()) if (live.has(r.cluster)) add(r);

    // IPs of imports that are gone are released; the others keep theirs.
    for (const k of [...this.#ips.keys()]) if (!groups.has(k)) this.#ips.delete(k);
    const taken = new Set(this.#ips.values());
    const nodes = [...this.#nodes.values()];
    const svc = new Map<string, Service>();
    const views = new Map<string, EndpointSlice>();
    const imports: ImportSummary[] = [];
    for (const [k, records] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const first = records[0] as ServiceExportRecord;
      let ip = this.#ips.get(k);
      if (ip === undefined) {
        ip = allocateClusterSetIp(this.opts.clusterSetCidr, first.namespace, first.name, taken);
        this.#ips.set(k, ip);
        taken.add(ip);
      }
      const imp = importService({ cluster: this.opts.cluster, records, clusterSetIp: ip, nodes });
      const headless = imp.service.spec.clusterIP === 'None';
      const derived = imp.service.metadata.name;
      svc.set(svcKey({ cluster: this.opts.cluster, namespace: first.namespace, name: derived }), imp.service);
      for (const e of imp.views.entries.values()) {
        views.set(viewKey({ cluster: this.opts.cluster, zone: e.zone, namespace: e.namespace, service: e.slice.metadata.labels?.[LABEL_SERVICE_NAME] ?? derived, slice: e.sliceName }), e.slice);
      }
      imports.push({ namespace: first.namespace, name: first.name, derived, clusterSetIp: headless ? null : ip, clusters: imp.merged.clusters, source: imp.source, conflicts: imp.merged.conflicts, merged: imp.merged });
    }
    return { svc, views, imports, live: [...live].sort() };
  }
}
