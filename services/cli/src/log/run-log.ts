// `slicemesh log …`: opens the log (a file with -f, else the live streams), runs one engine
// function of @slicemesh/history and prints its answer as text or JSON. Bad input is a
// UsageError or a HistoryInputError: one line, exit 2 (run.ts).

import type { Writable } from 'node:stream';
import type { DeadLetterEntry, LogPoint, LogSource } from '@slicemesh/history';
import { HistoryInputError, diffStates, exportLog, historyOf, nodeProgram, redrivePlan, resolvePoint, stateAt, streamSink, whyNode } from '@slicemesh/history';
import { redriveDeadLetter } from '@slicemesh/nats';
import { UsageError } from '../cli-error.ts';
import type { CliIO } from '../run.ts';
import type { LiveLog } from './live-log.ts';
import { openLogSource } from './open-source.ts';
import type { LogCommandLine } from './log-args.ts';
import type { Env } from './open-source.ts';
import { parseLogCommandLine, serviceRef } from './log-args.ts';
import { LOG_USAGE } from './log-usage.ts';
import { progressBar } from './progress.ts';
import { diffText, dlqListText, historyText, programText, stateText, whyText } from './render-text.ts';

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

function letterBySeq(letters: readonly DeadLetterEntry[], arg: string): DeadLetterEntry {
  if (!/^\d+$/.test(arg)) throw new UsageError(`a dead letter is named by its DLQ sequence number (got ${JSON.stringify(arg)})`);
  const l = letters.find((x) => x.seq === Number(arg));
  if (l === undefined) throw new HistoryInputError(`no dead letter with sequence ${arg}`);
  return l;
}

async function dlq(cl: LogCommandLine, src: LogSource, io: CliIO, asJson: boolean): Promise<void> {
  const [action = 'list', ...rest] = cl.args;
  const letters = await src.deadLetters();
  if (action === 'list') {
    if (rest.length > 0) throw new UsageError(`log dlq list takes no arguments (got ${JSON.stringify(rest[0])})`);
    io.stdout.write(asJson ? json(letters) : dlqListText(letters));
    return;
  }
  if (action === 'show') {
    if (rest.length !== 1) throw new UsageError('log dlq show needs one DLQ sequence number');
    const l = letterBySeq(letters, rest[0] as string);
    io.stdout.write(json(l));
    return;
  }
  if (action !== 'redrive') throw new UsageError(`log dlq takes list, show or redrive (got ${JSON.stringify(action)})`);
  if (src.kind !== 'live') throw new UsageError('log dlq redrive publishes to the live streams; it does not work on a file (-f)');
  if (rest.length === 0 && cl.switches.all !== true) throw new UsageError('log dlq redrive needs DLQ sequence numbers, or --all');
  const chosen = cl.switches.all === true ? letters : rest.map((a) => letterBySeq(letters, a));
  const live = src as LiveLog;
  const results: { seq: number; redriven: boolean; subject?: string; streamSeq?: number; duplicate?: boolean; why?: string }[] = [];
  for (const step of redrivePlan(chosen)) {
    if (!step.redrive) {
      results.push({ seq: step.seq, redriven: false, why: step.why });
      continue;
    }
    const r = await redriveDeadLetter(live.js, { subject: step.subject, body: step.body, dlqStream: live.names.dlq, dlqSeq: step.seq });
    results.push({ seq: step.seq, redriven: !r.duplicate, subject: step.subject, streamSeq: r.seq, duplicate: r.duplicate, ...(r.duplicate ? { why: 'already redriven (the stream dropped it as a duplicate)' } : {}) });
  }
  if (asJson) io.stdout.write(json(results));
  else {
    for (const r of results) {
      io.stdout.write(r.redriven ? `dead letter ${r.seq}: republished to ${r.subject} (${r.streamSeq !== undefined ? `stream seq ${r.streamSeq}` : ''})\n` : `dead letter ${r.seq}: not republished: ${r.why ?? ''}\n`);
    }
    const n = results.filter((r) => r.redriven).length;
    io.stdout.write(`redrove ${n} of ${results.length} dead letter${results.length === 1 ? '' : 's'}; the letters stay in the DLQ as a record\n`);
  }
}

async function execute(cl: LogCommandLine, io: CliIO, env: Env): Promise<void> {
  const asJson = cl.flags.output === 'json';
  const wantsBars = cl.switches.progress ?? ((io.stderr as { isTTY?: boolean }).isTTY === true);
  // Argument checks that need no log come first.
  const service = cl.command === 'history' || cl.command === 'why' ? serviceRef(cl.args[0] as string) : undefined;
  const src = await openLogSource(cl.flags, env);
  try {
    if (src.kind === 'file' && 'info' in src && (src as { info: { complete: boolean } }).info.complete === false) {
      io.stderr.write(`slicemesh: warning: ${src.description} has no end line; it was cut short and ends early\n`);
    }
    const trimmed = src.kind === 'live' ? (src as LiveLog).trimmedBefore : null;
    if (trimmed !== null) io.stderr.write(`slicemesh: warning: ${src.description} no longer holds its messages before seq ${trimmed}; objects created before then are missing from the replay\n`);
    const bar = progressBar(io.stderr, wantsBars, cl.command === 'export' ? 'export' : 'replay');
    // One point: no checkpoints to keep (they hold on to old objects); diff's second replay
    // starts from the first one's.
    const replay = async (p: LogPoint, checkpoints = false) => {
      try {
        return await stateAt(src, p, bar.update, { checkpoints });
      } finally {
        bar.stop();
      }
    };
    switch (cl.command) {
      case 'history': {
        const ref = service as { namespace: string; name: string };
        const entries = await historyOf(src, ref, bar.update).finally(bar.stop);
        io.stdout.write(asJson ? json(entries) : historyText(`${ref.namespace}/${ref.name}`, entries));
        return;
      }
      case 'at': {
        const state = await replay(await resolvePoint(src, cl.args[0] as string));
        const node = cl.flags.node;
        if (node === undefined) io.stdout.write(asJson ? json(state) : stateText(state));
        else {
          const program = nodeProgram(state, node);
          if (!program.known) io.stderr.write(`slicemesh: warning: node ${node} is not in the log at seq ${state.at.seq}; treated as a node without labels\n`);
          io.stdout.write(asJson ? json(program) : programText(program, state));
        }
        return;
      }
      case 'why': {
        const state = await replay(await resolvePoint(src, cl.flags.at ?? 'latest'));
        const report = whyNode(state, cl.flags.node as string, service as { namespace: string; name: string });
        io.stdout.write(asJson ? json(report) : whyText(report));
        return;
      }
      case 'diff': {
        const a = await resolvePoint(src, cl.args[0] as string);
        const b = await resolvePoint(src, cl.args[1] as string);
        const sa = await replay(a, true);
        const sb = await replay(b, true);
        const diffs = diffStates(sa, sb);
        io.stdout.write(asJson ? json({ from: a, to: b, services: diffs }) : diffText(sa, sb, diffs));
        return;
      }
      case 'dlq':
        await dlq(cl, src, io, asJson);
        return;
      case 'export': {
        const out = cl.flags.out;
        if (out === undefined && (io.stdout as { isTTY?: boolean }).isTTY === true) throw new UsageError('log export writes a file: redirect stdout (> incident.slog) or give -o FILE');
        const from = cl.flags.from === undefined ? undefined : await resolvePoint(src, cl.flags.from);
        const to = cl.flags.to === undefined ? undefined : await resolvePoint(src, cl.flags.to);
        if (from !== undefined && to !== undefined && to.seq < from.seq) throw new UsageError(`--to (seq ${to.seq}) is before --from (seq ${from.seq})`);
        const gzip = cl.switches.gzip ?? (out?.endsWith('.gz') === true);
        const target = streamSink(out ?? (io.stdout as unknown as Writable), gzip);
        const summary = await exportLog(src, target.sink, { ...(from ? { from } : {}), ...(to ? { to } : {}), now: new Date().toISOString(), onProgress: bar.update }).finally(bar.stop);
        await target.close();
        io.stderr.write(`slicemesh: exported ${summary.events} events after a snapshot at seq ${summary.snapshotSeq} (${summary.objects} objects, ${summary.slices} slices) and ${summary.deadLetters} dead letters, ${summary.reconciles} recorded reconciles${out ? ` to ${out}` : ''}\n`);
        return;
      }
      case null:
        return;
      default: {
        const never: never = cl.command;
        throw new Error(`unhandled log command ${String(never)}`);
      }
    }
  } finally {
    await src.close();
  }
}

/** Runs `slicemesh log <argv…>`; errors propagate to run.ts, which prints them on one line. */
export async function runLog(argv: readonly string[], io: CliIO, env: Env): Promise<void> {
  const cl = parseLogCommandLine(argv);
  if (cl.help) {
    io.stdout.write(LOG_USAGE);
    return;
  }
  await execute(cl, io, env);
}
