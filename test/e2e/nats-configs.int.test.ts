// Every NATS configuration in infra/nats passes the server's own configuration check, and every
// stream definition there is a complete JetStream stream configuration.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../services/stack/src/index.ts';
import { natsServerBinary } from './support/nats-servers.ts';

const DIR = join(REPO_ROOT, 'infra/nats');
const binary = natsServerBinary();
const confs = readdirSync(DIR).filter((f) => f.endsWith('.conf')).sort();
const streams = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

describe.skipIf(binary === undefined)('infra/nats configurations (nats-server -t)', () => {
  it('covers a single server, a 3-node cluster and a hub with two leaves', () => {
    expect(confs).toEqual(['cluster-1.conf', 'cluster-2.conf', 'cluster-3.conf', 'hub.conf', 'leaf-a.conf', 'leaf-b.conf', 'single.conf']);
  });
  for (const conf of confs) {
    it(`${conf} is valid`, () => {
      const out = execFileSync(binary as string, ['-t', '-c', join(DIR, conf)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(out).toBe(''); // the verdict goes to stderr; a failure throws
    });
  }
  it('a broken configuration is rejected (the check can fail)', () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'nats-conf-')), 'bad.conf');
    writeFileSync(bad, readFileSync(join(DIR, 'single.conf'), 'utf8').replace('store_dir', 'store_dirr'));
    expect(() => execFileSync(binary as string, ['-t', '-c', bad], { stdio: ['ignore', 'pipe', 'pipe'] })).toThrow(/store_dirr/);
  });
  it('every JetStream domain is distinct and the leaves connect to the hub', () => {
    const domain = (f: string): string | undefined => /domain:\s*(\S+)/.exec(readFileSync(join(DIR, f), 'utf8'))?.[1];
    expect(['hub.conf', 'leaf-a.conf', 'leaf-b.conf'].map(domain)).toEqual(['hub', 'a', 'b']);
    for (const f of ['leaf-a.conf', 'leaf-b.conf']) expect(readFileSync(join(DIR, f), 'utf8')).toContain('nats-leaf://hub:7422');
    for (const f of ['cluster-1.conf', 'cluster-2.conf', 'cluster-3.conf']) expect(readFileSync(join(DIR, f), 'utf8')).toMatch(/routes: \[\s*nats-route:\/\/nats-1:6222\s*nats-route:\/\/nats-2:6222\s*nats-route:\/\/nats-3:6222\s*\]/);
  });
});

describe('infra/nats stream definitions', () => {
  for (const f of streams) {
    it(`${f} names the stream, its storage and limits, and sources only through a leaf domain`, () => {
      const c = JSON.parse(readFileSync(join(DIR, f), 'utf8')) as { name: string; storage: string; retention: string; duplicate_window: number; sources?: { external?: { api: string } }[] };
      expect(c.name).toMatch(/^(KUBE|SLICES|DLQ)$/);
      expect(c.storage).toBe('file');
      expect(c.retention).toBe('limits');
      expect(c.duplicate_window).toBe(120_000_000_000);
      for (const s of c.sources ?? []) expect(s.external?.api).toMatch(/^\$JS\.[a-z]+\.API$/);
    });
  }
});
