import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUserNkey } from './auth-config.ts';
import { AUTH_CONF_FILE, clusterKeyDir, roleCredentials, roleSeedFile, writeNatsAuth } from './auth-files.ts';
import type { WriteNatsAuthOptions } from './auth-files.ts';
import { DEFAULT_NAMES } from './streams.ts';

const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'auth-files-')), 'keys');
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('writeNatsAuth', () => {
  it('writes one secret seed per role and a shared agent key, and the block naming each public key', () => {
    const dir = fresh();
    const files = writeNatsAuth({ dir, scope: { cluster: 'c1' } });
    expect(readdirSync(dir).sort()).toEqual([AUTH_CONF_FILE, 'admin.nk', 'agent.nk', 'hints.nk', 'mcs.nk', 'publisher.nk', 'reader.nk', 'slicer.nk', 'watcher.nk'].sort());
    expect(mode(dir)).toBe(0o700);
    const conf = readFileSync(files.authConf, 'utf8');
    for (const u of files.users) {
      expect(mode(u.seedFile), u.seedFile).toBe(0o600);
      expect(readFileSync(u.seedFile, 'utf8')).toMatch(/^SU[A-Z2-7]+\n$/);
      expect(isUserNkey(u.nkey)).toBe(true);
      expect(conf).toContain(`# ${u.role}\n    { nkey: "${u.nkey}"`);
      // The block holds public keys only.
      expect(conf).not.toContain(readFileSync(u.seedFile, 'utf8').trim());
    }
    expect(conf).toContain('"kube.c1.>"'); // scoped to the cluster asked for
  });

  it('gives each named agent a key of its own', () => {
    const dir = fresh();
    const files = writeNatsAuth({ dir, scope: { cluster: 'c1' }, agents: ['node-a', 'node-b'] });
    expect(files.users.filter((u) => u.role === 'agent').map((u) => u.seedFile)).toEqual([roleSeedFile(dir, 'agent', 'node-a'), roleSeedFile(dir, 'agent', 'node-b')]);
    expect(existsSync(join(dir, 'agent.nk'))).toBe(false);
  });

  it('writes the users of several clusters into one block, each cluster\'s seeds in a directory of its own', () => {
    const dir = fresh();
    const scopes = [
      { cluster: 'cluster-a', names: { ...DEFAULT_NAMES, prefix: 'a.' } },
      { cluster: 'cluster-b', names: { ...DEFAULT_NAMES, prefix: 'b.' } },
    ];
    const files = writeNatsAuth({ dir, scope: scopes, agents: ['n1'] });
    expect(readdirSync(dir).sort()).toEqual([AUTH_CONF_FILE, 'cluster-a', 'cluster-b']);
    const conf = readFileSync(files.authConf, 'utf8');
    expect(conf.split('\n')[0]).toBe('# Generated for clusters "cluster-a", "cluster-b": one nkey user per role, least privilege.');
    for (const s of scopes) {
      const keys = clusterKeyDir(dir, s.cluster);
      expect(mode(keys)).toBe(0o700);
      expect(readdirSync(keys).sort()).toEqual(['admin.nk', 'agent-n1.nk', 'hints.nk', 'mcs.nk', 'publisher.nk', 'reader.nk', 'slicer.nk', 'watcher.nk']);
      const mine = files.users.filter((u) => u.cluster === s.cluster);
      expect(mine.length).toBe(8);
      for (const u of mine) {
        expect(u.seedFile.startsWith(`${keys}/`), u.seedFile).toBe(true);
        expect(conf).toContain(`# ${u.role} of cluster "${s.cluster}"\n    { nkey: "${u.nkey}"`);
      }
      // The watcher of each cluster publishes its own cluster's objects under its own prefix.
      const watcher = mine.find((u) => u.role === 'watcher')?.nkey ?? '?';
      const entry = conf.slice(conf.indexOf(watcher), conf.indexOf('\n    #', conf.indexOf(watcher)));
      expect(entry).toContain(`"${s.names.prefix}kube.${s.cluster}.>"`);
    }
  });

  it('writes a cluster\'s keys in the directory itself when it is the only one, even given as a list', () => {
    const dir = fresh();
    writeNatsAuth({ dir, scope: [{ cluster: 'c1' }] });
    expect(readdirSync(dir)).toContain('watcher.nk');
    expect(readFileSync(join(dir, AUTH_CONF_FILE), 'utf8')).toContain('# watcher\n');
  });

  const refusals: { name: string; prepare: (dir: string) => void; agents?: string[]; scope?: WriteNatsAuthOptions['scope']; message: RegExp }[] = [
    { name: 'an existing seed without force', prepare: (dir) => writeNatsAuth({ dir, scope: { cluster: 'c1' } }), message: /watcher\.nk exists: keys are never replaced by accident/ },
    { name: 'an existing seed of one of several clusters', prepare: (dir) => writeNatsAuth({ dir: clusterKeyDir(dir, 'b'), scope: { cluster: 'b' } }), scope: [{ cluster: 'a' }, { cluster: 'b' }], message: /b\/watcher\.nk exists/ },
    { name: 'an agent name that is no file name', prepare: () => {}, agents: ['../etc'], message: /"\.\.\/etc" is not a usable agent name/ },
    { name: 'an agent named twice', prepare: () => {}, agents: ['a', 'a'], message: /an agent is named twice/ },
    { name: 'a cluster given twice', prepare: () => {}, scope: [{ cluster: 'a' }, { cluster: 'a' }], message: /cluster "a" is given twice/ },
    { name: 'a cluster of several that cannot name a directory', prepare: () => {}, scope: [{ cluster: 'a' }, { cluster: '../b' }], message: /cluster "\.\.\/b" cannot name its keys' directory/ },
    { name: 'no cluster at all', prepare: () => {}, scope: [], message: /no cluster to write keys for/ },
  ];
  /** Every file under `dir` with its text, or undefined when there is no `dir`. */
  const snapshot = (dir: string): string[][] | undefined =>
    existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort().map((f) => [f, statSync(join(dir, f)).isDirectory() ? '<dir>' : readFileSync(join(dir, f), 'utf8')]) : undefined;
  for (const tc of refusals) {
    it(`refuses ${tc.name} and writes nothing`, () => {
      const dir = fresh();
      tc.prepare(dir);
      const before = snapshot(dir);
      expect(() => writeNatsAuth({ dir, scope: tc.scope ?? { cluster: 'c1' }, ...(tc.agents ? { agents: tc.agents } : {}) })).toThrow(tc.message);
      expect(snapshot(dir)).toEqual(before);
    });
  }

  it('rotates every key with force', () => {
    const dir = fresh();
    const first = writeNatsAuth({ dir, scope: { cluster: 'c1' } });
    writeFileSync(join(dir, 'unrelated.txt'), 'kept');
    const second = writeNatsAuth({ dir, scope: { cluster: 'c1' }, force: true });
    expect(second.users.map((u) => u.nkey)).not.toEqual(expect.arrayContaining([first.users[0]?.nkey]));
    expect(readFileSync(join(dir, 'unrelated.txt'), 'utf8')).toBe('kept');
  });
});

describe('roleCredentials', () => {
  it("connects as the role with its seed, or with nothing on an open server", () => {
    expect(roleCredentials('/k', 'reader')).toEqual({ nkeySeedFile: '/k/reader.nk', role: 'reader' });
    expect(roleCredentials(undefined, 'reader')).toEqual({});
    expect(() => roleSeedFile('/k', 'slicer', 'x')).toThrow(/only the agent role has per-agent keys/);
  });
});
