// Progress bars on stderr (cli-progress) for replays and exports: only when stderr is a terminal
// or --progress asks, never mixed into stdout.

import { SingleBar } from 'cli-progress';
import type { Writable } from '../run.ts';

export interface ProgressBar {
  readonly update: (done: number, total: number) => void;
  readonly stop: () => void;
}

const NONE: ProgressBar = { update: () => {}, stop: () => {} };

/** A bar titled `label`; a no-op when `enabled` is false. */
export function progressBar(stderr: Writable, enabled: boolean, label: string): ProgressBar {
  if (!enabled) return NONE;
  const bar = new SingleBar({
    stream: stderr as unknown as NodeJS.WritableStream,
    format: `${label} [{bar}] {percentage}% | {value}/{total} events | {eta_formatted} left`,
    hideCursor: false,
    clearOnComplete: true,
    noTTYOutput: true,
    notTTYSchedule: 2000,
    etaBuffer: 50,
  });
  let started = false;
  return {
    update: (done, total) => {
      if (!started) {
        bar.start(Math.max(1, total), 0);
        started = true;
      }
      bar.setTotal(Math.max(1, total));
      bar.update(done);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}
