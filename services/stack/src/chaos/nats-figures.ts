// The figures of a NATS server lost from a cluster (the campaign's nats_cluster mode), as pure
// functions of what the campaign read afterwards: the stall (the longest time in which a stream of
// the pipeline stored nothing, from the server's own timestamps of the stored messages), and each
// service's reconnect, read from the NATS status lines of its log.

/** Times (ms) at which one stream stored a message, ascending. */
export type ProgressTimes = readonly number[];

/**
 * The longest time without a stored message that overlaps [from, to]: the gap between two
 * consecutive messages, or between the last message and `end` (churn stopped) when nothing came
 * after it. 0 when every gap that overlaps the window is empty (no messages at all: end - from).
 */
export function longestGap(times: ProgressTimes, from: number, to: number, end: number): number {
  let longest = 0;
  let prev: number | undefined;
  for (const stored of [...times, end]) {
    const t = Math.min(stored, end); // what came after churn stopped counts from then
    if (prev === undefined) {
      if (t > from) longest = t - from; // nothing stored before the window
    } else if (prev < to && t > from) longest = Math.max(longest, t - prev);
    if (t >= end) break;
    prev = t;
  }
  return longest;
}

/** One NATS connection status line of a service's log. */
export interface NatsStatusLine {
  readonly timeMs: number;
  /** The client's status type: disconnect, reconnect, reconnecting, update, error, … */
  readonly type: string;
}

/** pino's level numbers: warn and above. */
const WARN = 40;

interface LogRecord {
  readonly time?: string | number;
  readonly level?: string | number;
  readonly msg?: string;
  readonly nats?: string | { readonly type?: string };
  readonly natsStatus?: string;
  readonly event?: string;
}

function parseLine(line: string): LogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as LogRecord;
  } catch {
    return undefined;
  }
}

const timeOf = (r: LogRecord): number => (typeof r.time === 'number' ? r.time : Date.parse(r.time ?? ''));

/**
 * The NATS status lines of one service's log (pino JSON lines). The services word them
 * differently (`nats status` with natsStatus or event, `NATS status` with nats.type, `NATS
 * connection status` with nats); all carry the client's status type.
 */
export function natsStatusLines(text: string): NatsStatusLine[] {
  const out: NatsStatusLine[] = [];
  for (const line of text.split('\n')) {
    const r = parseLine(line);
    if (r === undefined || !/^nats (connection )?status$/i.test(r.msg ?? '')) continue;
    const type = r.natsStatus ?? r.event ?? (typeof r.nats === 'string' ? r.nats : r.nats?.type);
    const timeMs = timeOf(r);
    if (type !== undefined && Number.isFinite(timeMs)) out.push({ timeMs, type });
  }
  return out;
}

/** Times (ms) of the lines at warn level or above (pino numbers or names). */
export function warnLineTimes(text: string): number[] {
  const out: number[] = [];
  for (const line of text.split('\n')) {
    const r = parseLine(line);
    if (r === undefined) continue;
    const level = typeof r.level === 'number' ? r.level : ({ warn: 40, error: 50, fatal: 60 } as Record<string, number>)[r.level ?? ''] ?? 0;
    const t = timeOf(r);
    if (level >= WARN && Number.isFinite(t)) out.push(t);
  }
  return out;
}

/** What one service logged about one lost server, from the kill until the window's end. */
export interface ServiceReconnect {
  readonly component: string;
  /** Seconds from the kill to its first `reconnect` line; undefined when it never lost its connection. */
  readonly reconnectS?: number;
  /** Lines of type disconnect and reconnect in the window: one each per connection on the lost server, not one per message. */
  readonly disconnectLines: number;
  readonly reconnectLines: number;
  /** Every line at warn or above in the window. */
  readonly warnLines: number;
}

/**
 * Per service: its reconnect after a server killed at `killedAt`, from its status lines in
 * [killedAt, until). A service whose connection was on another server logs no disconnect.
 */
export function reconnectOf(component: string, status: readonly NatsStatusLine[], warns: readonly number[], killedAt: number, until: number): ServiceReconnect {
  const inWindow = status.filter((l) => l.timeMs >= killedAt && l.timeMs < until);
  const disconnects = inWindow.filter((l) => l.type === 'disconnect');
  const reconnects = inWindow.filter((l) => l.type === 'reconnect');
  const firstDisconnect = disconnects[0];
  const firstReconnect = firstDisconnect === undefined ? undefined : reconnects.find((l) => l.timeMs >= firstDisconnect.timeMs);
  return {
    component,
    ...(firstReconnect !== undefined ? { reconnectS: (firstReconnect.timeMs - killedAt) / 1000 } : {}),
    disconnectLines: disconnects.length,
    reconnectLines: reconnects.length,
    warnLines: warns.filter((t) => t >= killedAt && t < until).length,
  };
}

/** One nats-kill of the campaign with what it did to the pipeline. */
export interface NatsKillFigures {
  readonly server: string;
  /** The server led the KUBE stream when it was killed. */
  readonly wasKubeLeader: boolean;
  /** Since the start of the fault phase, ms. */
  readonly atMs: number;
  /** Seconds until KUBE had a leader on another server (a killed leader only); undefined if never seen. */
  readonly leaderElectedS?: number;
  /** Seconds from the restart until every replica of KUBE and SLICES was current again; undefined if never seen. */
  readonly absorbedS?: number;
  /** The longest time without a stored message per stream, in a window from the kill until 5 s after the restart, seconds. */
  readonly stallS: Readonly<Record<string, number>>;
  readonly services: readonly ServiceReconnect[];
}

/** The most lines of one type one service wrote about one lost server beyond which it logs per message, not per reconnect. */
export const RECONNECT_LINES_BAR = 3;

/** The summary of every nats-kill: the longest stall, the reconnect times and the log lines. */
export interface NatsClusterSummary {
  readonly maxStallS: number | null;
  /** Reconnect seconds, over every service that lost its connection in any kill. */
  readonly maxReconnectS: number | null;
  readonly medianReconnectS: number | null;
  readonly reconnects: number;
  /** Most disconnect or reconnect lines of one service for one kill. */
  readonly maxReconnectLines: number;
  /** Most lines at warn or above of one service for one kill (with the service): many mean it logs per message. */
  readonly maxWarnLines: number;
  readonly noisiest?: string;
  readonly maxLeaderElectedS: number | null;
  readonly maxAbsorbedS: number | null;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

export function summarizeNatsKills(kills: readonly NatsKillFigures[]): NatsClusterSummary {
  const stalls = kills.flatMap((k) => Object.values(k.stallS));
  const rec = kills.flatMap((k) => k.services.flatMap((s) => (s.reconnectS === undefined ? [] : [s.reconnectS]))).sort((a, b) => a - b);
  const max = (xs: readonly number[]): number | null => (xs.length === 0 ? null : round2(Math.max(...xs)));
  const defined = (xs: readonly (number | undefined)[]): number[] => xs.filter((x): x is number => x !== undefined);
  return {
    maxStallS: max(stalls),
    maxReconnectS: max(rec),
    medianReconnectS: rec.length === 0 ? null : round2(rec[Math.floor((rec.length - 1) / 2)] as number),
    reconnects: rec.length,
    maxReconnectLines: Math.max(0, ...kills.flatMap((k) => k.services.map((s) => Math.max(s.disconnectLines, s.reconnectLines)))),
    ...noisiestOf(kills),
    maxLeaderElectedS: max(defined(kills.map((k) => k.leaderElectedS))),
    maxAbsorbedS: max(defined(kills.map((k) => k.absorbedS))),
  };
}

function noisiestOf(kills: readonly NatsKillFigures[]): { maxWarnLines: number; noisiest?: string } {
  let best: ServiceReconnect | undefined;
  for (const s of kills.flatMap((k) => k.services)) if (best === undefined || s.warnLines > best.warnLines) best = s;
  return best === undefined || best.warnLines === 0 ? { maxWarnLines: 0 } : { maxWarnLines: best.warnLines, noisiest: best.component };
}
