// One sync: observe (check out the pending changes), model (endpoint selection for the
// changed services, or all of them), render + apply through the backend, record metrics.
// Habit 5: a failed apply sets needFullSync, so the retry never takes the partial path; a
// full sync also happens at start and at least every fullSyncPeriod.

import type { Node } from '@slicemesh/model';
import type { ConntrackPortState, ServiceHealthInfo, StaleFlows } from '@slicemesh/proxy-state';
import { staleConntrackFlows } from '@slicemesh/proxy-state';
import { ApplyError } from '@slicemesh/netfilter';
import type { Clock, Logger } from '@slicemesh/runtime';
import type { Backend, BackendSyncResult } from './backend.ts';
import type { ConntrackCleaner, ConntrackCleanupReport } from './conntrack-cleaner.ts';
import type { NodeSettings, ServiceModel } from './dp-model.ts';
import { dpStateOf, selfNode, serviceModelFor } from './dp-model.ts';
import type { ProxyMetrics } from './metrics.ts';
import type { ViewState } from './view-state.ts';

/** The outcome of one sync, kept as `lastSync`. */
export interface SyncReport {
  readonly ok: boolean;
  /** What was done (or, on failure, tried). */
  readonly mode: 'full' | 'partial';
  /** Clock time the sync started and finished. */
  readonly startedAt: number;
  readonly finishedAt: number;
  /** Services whose changes this sync consumed. */
  readonly changedServices: readonly string[];
  /** The backend's object counts (absent on failure). */
  readonly counts?: Readonly<Record<string, number>>;
  /** The error message (failure only). */
  readonly error?: string;
  /** The conntrack cleanup after the rules were in (D.7); absent when there was nothing to clean. */
  readonly conntrack?: ConntrackCleanupReport & { readonly durationMs: number };
}

export interface ProxySyncerOptions {
  readonly state: ViewState;
  readonly backend: Backend;
  readonly settings: NodeSettings;
  /**
   * Dual stack (D.11): the other family, programmed in the same sync after the first (its own
   * endpoint selection, DpState and backend; a failure of either makes the sync fail). Health
   * facts and conntrack cleanup follow the first family.
   */
  readonly secondary?: { readonly settings: NodeSettings; readonly backend: Backend };
  readonly clock: Clock;
  readonly metrics: ProxyMetrics;
  readonly log: Logger;
  /** A sync rewrites everything when the last full one is at least this old. */
  readonly fullSyncPeriodMs: number;
  /** After a failure: ask for the next run no later than this from now. */
  readonly retryAfter: (ms: number) => void;
  readonly retryDelayMs: number;
  /**
   * Told after every successful sync, with the health facts of every service (D.9): the
   * health-check servers follow them. Awaited; must not throw.
   */
  readonly onSynced?: (health: ReadonlyMap<string, ServiceHealthInfo>) => Promise<void> | void;
  /** Deletes (or records) the UDP conntrack entries a sync leaves stale (D.7); absent: none. */
  readonly conntrack?: ConntrackCleaner;
}

/** One result for a dual-stack sync: full if either was, counts summed per label, details per family. */
export function combineResults(a: BackendSyncResult, b: BackendSyncResult, familyA: string, familyB: string): BackendSyncResult {
  const counts: Record<string, number> = { ...a.counts };
  for (const [k, v] of Object.entries(b.counts)) counts[k] = (counts[k] ?? 0) + v;
  return { mode: a.mode === 'full' || b.mode === 'full' ? 'full' : 'partial', counts, detail: { [familyA]: a.detail ?? {}, [familyB]: b.detail ?? {} } };
}

export class ProxySyncer {
  readonly #o: ProxySyncerOptions;
  /** This node as endpoint selection sees it; its zone label follows setZone. */
  #node: Node;
  /** Programmed ports and health facts per service `<ns>/<name>`, as of the last sync. */
  #models = new Map<string, ServiceModel>();
  /** Dual stack: the secondary family's models, likewise. */
  #models2 = new Map<string, ServiceModel>();
  /** UDP ports per service as the kernel has them: the last successful sync's (D.7). */
  #appliedUdp = new Map<string, readonly ConntrackPortState[]>();
  #needFullSync = true;
  #lastFullSyncAt = -Infinity;
  #last: SyncReport | null = null;

  constructor(opts: ProxySyncerOptions) {
    this.#o = opts;
    this.#node = selfNode(opts.settings);
  }

  /**
   * The node's zone changed (its view moved): endpoint selection uses the new zone label from
   * the next sync on, and that sync rewrites every rule.
   */
  setZone(zone: string): void {
    this.#node = selfNode({ nodeName: this.#o.settings.nodeName, zone });
    this.#needFullSync = true;
  }

  /** The last sync's outcome; null before the first. */
  get lastSync(): SyncReport | null {
    return this.#last;
  }

  /** Whether the next sync will be full. */
  get needsFullSync(): boolean {
    return this.#needFullSync || this.#o.clock.now() - this.#lastFullSyncAt >= this.#o.fullSyncPeriodMs;
  }

  #model(key: string, settings: NodeSettings = this.#o.settings): ServiceModel | undefined {
    const service = this.#o.state.service(key);
    return service === undefined ? undefined : serviceModelFor(service, this.#o.state.slicesOf(key), this.#node, settings);
  }

  /** Recomputes `models` for `settings`' family: every service (full) or the changed ones. */
  #remodel(models: Map<string, ServiceModel>, settings: NodeSettings, changed: readonly string[] | null): Map<string, ServiceModel> {
    const keys = changed ?? [...this.#o.state.serviceKeys()];
    const out = changed === null ? new Map<string, ServiceModel>() : models;
    for (const key of keys) {
      const m = this.#model(key, settings);
      if (m === undefined) out.delete(key);
      else out.set(key, m);
    }
    return out;
  }

  /** Runs one sync. Never throws: failures are logged, counted and reported. */
  async sync(): Promise<SyncReport> {
    const { state, backend, clock, metrics, log } = this.#o;
    const startedAt = clock.now();
    const co = state.checkout();
    const full = this.needsFullSync;
    const mode = full ? 'full' : 'partial';
    const changed = [...co.changedServices];
    metrics.serviceChanges.inc(co.serviceChanges);
    metrics.endpointChanges.inc(co.endpointChanges);
    try {
      this.#models = this.#remodel(this.#models, this.#o.settings, full ? null : changed);
      const servicePorts = [...this.#models.values()].flatMap((m) => m.ports);
      const changedServices = full ? null : co.changedServices;
      let result = await backend.sync({ state: dpStateOf(servicePorts, this.#o.settings), changedServices });
      const secondary = this.#o.secondary;
      if (secondary !== undefined) {
        this.#models2 = this.#remodel(this.#models2, secondary.settings, full ? null : changed);
        const ports2 = [...this.#models2.values()].flatMap((m) => m.ports);
        const r2 = await secondary.backend.sync({ state: dpStateOf(ports2, secondary.settings), changedServices });
        result = combineResults(result, r2, this.#o.settings.family, secondary.settings.family);
      }
      const finishedAt = clock.now();
      this.#needFullSync = false;
      if (result.mode === 'full') this.#lastFullSyncAt = startedAt;
      metrics.syncDuration.observe({ mode: result.mode }, (finishedAt - startedAt) / 1000);
      metrics.lastSyncTimestamp.set(finishedAt / 1000);
      metrics.setRuleCounts(result.counts);
      for (const times of co.triggerTimes.values()) {
        for (const t of times) if (finishedAt >= t) metrics.programmingLatency.observe((finishedAt - t) / 1000);
      }
      const conntrack = await this.#cleanConntrack(full ? null : changed);
      await this.#o.onSynced?.(new Map([...this.#models].map(([k, m]) => [k, m.health])));
      log.info({ mode: result.mode, durationMs: finishedAt - startedAt, servicePorts: servicePorts.length, changedServices: changed.length, counts: result.counts, ...result.detail }, 'synced proxy rules');
      this.#last = { ok: true, mode: result.mode, startedAt, finishedAt, changedServices: changed, counts: result.counts, ...(conntrack ? { conntrack } : {}) };
    } catch (err) {
      // The consumed changes are lost for a partial sync, so only a full one can recover.
      this.#needFullSync = true;
      state.restoreTriggerTimes(co.triggerTimes);
      metrics.syncFailures.inc({ mode });
      const lines = err instanceof ApplyError && err.excerpt.length > 0 ? { failingLines: err.excerptText() } : {};
      log.error({ err, mode, changedServices: changed.length, ...lines }, `${backend.kind} sync failed; the next sync is a full one`);
      this.#o.retryAfter(this.#o.retryDelayMs);
      const finishedAt = clock.now();
      this.#last = { ok: false, mode, startedAt, finishedAt, changedServices: changed, error: err instanceof Error ? err.message : String(err) };
    }
    return this.#last;
  }

  /**
   * After the rules are in: the UDP flows the change left on old decisions, from what the
   * kernel had (the last successful sync) to what it has now, for the changed services or, on
   * a full sync, all of them (a failed sync's changes are caught there). Runs them through
   * the cleaner; best effort, as upstream.
   */
  async #cleanConntrack(changed: readonly string[] | null): Promise<SyncReport['conntrack']> {
    const { conntrack: cleaner, clock, metrics, log } = this.#o;
    if (cleaner === undefined) return undefined;
    const keys = changed ?? [...new Set([...this.#appliedUdp.keys(), ...this.#models.keys()])];
    const flows: StaleFlows[] = [];
    for (const key of keys) {
      const before = this.#appliedUdp.get(key) ?? [];
      const now = this.#models.get(key)?.udp ?? [];
      if (before.length === 0 && now.length === 0) continue;
      flows.push(...staleConntrackFlows(before, now));
      if (now.length === 0) this.#appliedUdp.delete(key);
      else this.#appliedUdp.set(key, now);
    }
    if (flows.length === 0) return undefined;
    const start = clock.now();
    const report = await cleaner.clean(flows);
    const durationMs = clock.now() - start;
    const failed = new Set(report.failures.map((f) => f.command));
    flows.forEach((f, i) => {
      const result = report.mode === 'recorded' ? 'recorded' : failed.has(report.commands[i] ?? '') ? 'failed' : 'executed';
      metrics.conntrackCleanups.inc({ reason: f.reason, result });
    });
    metrics.conntrackEntriesDeleted.inc(report.deleted);
    metrics.conntrackCleanupDuration.observe(durationMs / 1000);
    const services = [...new Set(flows.map((f) => f.servicePort))];
    if (report.mode === 'recorded') log.info({ filters: flows.length, servicePorts: services, commands: report.commands }, 'recorded stale UDP conntrack cleanups (dry-run: not executed)');
    else log.info({ filters: flows.length, deleted: report.deleted, failed: report.failures.length, durationMs, servicePorts: services }, 'deleted stale UDP conntrack entries');
    for (const f of report.failures) log.warn({ command: f.command, err: f.error }, 'conntrack cleanup failed; stale UDP flows may keep going to removed endpoints');
    return { ...report, durationMs };
  }
}
