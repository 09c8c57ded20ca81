import { describe, expect, it } from 'vitest';
import { createLogger, LOG_KEYS, newReconcileID } from './logger.ts';
import type { Logger, LoggerOptions } from './logger.ts';

function capture(options: Omit<LoggerOptions, 'destination'>): { log: Logger; lines: () => Record<string, unknown>[] } {
  const raw: string[] = [];
  const log = createLogger({ ...options, destination: { write: (s: string) => void raw.push(s) } });
  return { log, lines: () => raw.map((s) => JSON.parse(s) as Record<string, unknown>) };
}

describe('createLogger', () => {
  const cases: readonly {
    name: string;
    level?: LoggerOptions['level'];
    write: (log: Logger) => void;
    want: readonly Record<string, unknown>[];
  }[] = [
    {
      name: 'writes one JSON line with component, level label and msg',
      write: (log) => log.info('started'),
      want: [{ component: 'slicer', level: 'info', msg: 'started' }],
    },
    {
      name: 'habit 15: reconcile keys come through under exactly their names',
      write: (log) => log.child({ [LOG_KEYS.service]: 'default/web', [LOG_KEYS.reconcileID]: 'r-1' }).info({ [LOG_KEYS.seq]: 42, [LOG_KEYS.slice]: 'default/web-abc' }, 'reconciled'),
      want: [{ component: 'slicer', service: 'default/web', reconcileID: 'r-1', seq: 42, slice: 'default/web-abc', msg: 'reconciled' }],
    },
    {
      name: 'drops lines below the level (default info)',
      write: (log) => {
        log.debug('hidden');
        log.warn('shown');
      },
      want: [{ level: 'warn', msg: 'shown' }],
    },
    {
      name: 'honours a lower level',
      level: 'debug',
      write: (log) => log.debug('visible'),
      want: [{ level: 'debug', msg: 'visible' }],
    },
    {
      name: 'silent writes nothing',
      level: 'silent',
      write: (log) => log.error('nothing'),
      want: [],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const { log, lines } = capture({ service: 'slicer', ...(tc.level ? { level: tc.level } : {}) });
      tc.write(log);
      const got = lines();
      expect(got).toHaveLength(tc.want.length);
      tc.want.forEach((w, i) => expect(got[i]).toMatchObject(w));
    });
  }

  it('stamps an ISO time', () => {
    const { log, lines } = capture({ service: 'hints' });
    log.info('x');
    expect(String(lines()[0]?.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('expands errors under err with type, message, stack and cause', () => {
    const { log, lines } = capture({ service: 'watcher' });
    log.error({ err: new Error('publish failed', { cause: new Error('timeout') }) }, 'watch event dropped');
    const err = lines()[0]?.err as Record<string, unknown>;
    expect(err).toMatchObject({ type: 'Error', message: expect.stringContaining('publish failed') });
    expect(String(err.stack)).toContain('publish failed');
    expect(JSON.stringify(err)).toContain('timeout');
  });

  it('puts an error passed alone under err too', () => {
    const { log, lines } = capture({ service: 'watcher' });
    log.error(new TypeError('bad'));
    expect(lines()[0]?.err).toMatchObject({ type: 'TypeError', message: 'bad' });
  });
});

describe('LOG_KEYS', () => {
  it('maps every key to itself, so the const documents the literal names', () => {
    for (const [k, v] of Object.entries(LOG_KEYS)) expect(v).toBe(k);
    expect(Object.keys(LOG_KEYS).sort()).toEqual(['cluster', 'component', 'err', 'node', 'reconcileID', 'seq', 'service', 'slice', 'subject']);
  });
});

describe('newReconcileID', () => {
  it('returns distinct UUIDs', () => {
    const ids = new Set(Array.from({ length: 50 }, newReconcileID));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
