import { describe, expect, it } from 'vitest';
import type { Logger } from '@slicemesh/runtime';
import { PublishOutage } from './publish-outage.ts';

function recorder() {
  const lines: string[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push(`${level} ${msg}${'outageMs' in fields ? ` ${String(fields['outageMs'])}ms ${String(fields['retries'])} retries` : ''}`);
  const log = { warn: at('warn'), debug: at('debug'), info: at('info') } as unknown as Logger;
  return { log, lines };
}

describe('PublishOutage', () => {
  it.each([
    ['nothing failed: nothing logged', 'ss', []],
    [
      'an outage of many failures is one warning, then one line when a publish works again',
      'fffs',
      ['warn publishing fails: retrying every change until it works (logged again when it does)', 'debug publish failed, retrying', 'debug publish failed, retrying', 'info publishing works again 30ms 3 retries'],
    ],
    [
      'a second outage is a second warning, its retries counted afresh',
      'fsfs',
      ['warn publishing fails: retrying every change until it works (logged again when it does)', 'info publishing works again 10ms 1 retries', 'warn publishing fails: retrying every change until it works (logged again when it does)', 'info publishing works again 10ms 1 retries'],
    ],
  ])('%s', (_name, events, want) => {
    const { log, lines } = recorder();
    let now = 0;
    const o = new PublishOutage(log, () => now);
    for (const e of events) {
      if (e === 'f') o.failed(new Error('no responders'), 'kube.c.0.pod.ns.p', 100);
      else o.succeeded();
      now += 10;
    }
    expect(lines).toEqual(want);
    expect(o.failing).toBe(false);
  });
});
