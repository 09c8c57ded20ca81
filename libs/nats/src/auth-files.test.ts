import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUserNkey } from './auth-config.ts';
import { AUTH_CONF_FILE, roleCredentials, roleSeedFile, writeNatsAuth } from './auth-files.ts';

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

  const refusals: { name: string; prepare: (dir: string) => void; agents?: string[]; message: RegExp }[] = [
    { name: 'an existing seed without force', prepare: (dir) => writeNatsAuth({ dir, scope: { cluster: 'c1' } }), message: /watcher\.nk exists: keys are never replaced by accident/ },
    { name: 'an agent name that is no file name', prepare: () => {}, agents: ['../etc'], message: /"\.\.\/etc" is not a usable agent name/ },
    { name: 'an agent named twice', prepare: () => {}, agents: ['a', 'a'], message: /an agent is named twice/ },
  ];
  for (const tc of refusals) {
    it(`refuses ${tc.name} and writes nothing`, () => {
      const dir = fresh();
      tc.prepare(dir);
      const before = existsSync(dir) ? readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]) : undefined;
      expect(() => writeNatsAuth({ dir, scope: { cluster: 'c1' }, ...(tc.agents ? { agents: tc.agents } : {}) })).toThrow(tc.message);
      expect(existsSync(dir) ? readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]) : undefined).toEqual(before);
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
