import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateRoleNkeys } from './auth-config.ts';
import { NatsCredentialsError, natsAuthenticator } from './credentials.ts';

const dir = mkdtempSync(join(tmpdir(), 'nats-creds-'));
const [key] = generateRoleNkeys(['agent']);
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('natsAuthenticator', () => {
  it('gives none without a file (connecting as before)', () => {
    expect(natsAuthenticator({})).toBeUndefined();
  });

  it('signs the nonce with the seed of the file, trailing newline and all', () => {
    const auth = natsAuthenticator({ nkeySeedFile: file('ok.seed', `${key!.seed}\n`) });
    expect(auth?.('nonce')).toMatchObject({ nkey: key!.nkey });
  });

  const unreadable = file('unreadable.seed', key!.seed);
  chmodSync(unreadable, 0o000);
  const rootReads = process.getuid?.() === 0;

  it.each([
    ['a missing file', join(dir, 'missing.seed'), 'NATS_NKEY_SEED_FILE', 'cannot read it (ENOENT)'],
    ['a directory', dir, 'NATS_NKEY_SEED_FILE', 'cannot read it (EISDIR)'],
    ['a file without a seed', file('empty.seed', '\n'), 'NATS_NKEY_SEED_FILE', 'does not hold a user nkey seed'],
    ['a public key instead of the seed', file('public.seed', key!.nkey), 'NATS_NKEY_SEED_FILE', 'does not hold a user nkey seed'],
    ['a corrupted seed', file('bad.seed', `${key!.seed.slice(0, -2)}AA`), 'NATS_NKEY_SEED_FILE', 'holds an invalid user nkey seed'],
  ])('refuses %s, naming the setting and the file', (_name, path, setting, reason) => {
    const err = (() => {
      try {
        natsAuthenticator({ nkeySeedFile: path });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(NatsCredentialsError);
    expect((err as Error).message).toContain(`${setting} ${path}: ${reason}`);
  });

  it.skipIf(rootReads)('refuses an unreadable file', () => {
    expect(() => natsAuthenticator({ nkeySeedFile: unreadable })).toThrow(`NATS_NKEY_SEED_FILE ${unreadable}: cannot read it (EACCES)`);
  });

  it('never puts the seed into the error', () => {
    const path = file('typo.seed', `${key!.seed.slice(0, -2)}AA`);
    expect(() => natsAuthenticator({ nkeySeedFile: path })).toThrow(/invalid/);
    try {
      natsAuthenticator({ nkeySeedFile: path });
    } catch (e) {
      expect(String((e as Error).message)).not.toContain(key!.seed.slice(0, 20));
    }
  });

  it('signs with the seed of a .creds file and presents its JWT (the server checks the JWT)', () => {
    const jwt = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln';
    const creds = `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${key!.seed}\n------END USER NKEY SEED------\n`;
    const auth = natsAuthenticator({ credsFile: file('ok.creds', creds) });
    expect(auth?.('nonce')).toMatchObject({ jwt, nkey: key!.nkey });
  });

  it('refuses a .creds file that is not one', () => {
    const path = file('bad.creds', 'hello\n');
    expect(() => natsAuthenticator({ credsFile: path })).toThrow(`NATS_CREDS_FILE ${path}: is not a NATS .creds file`);
  });

  it('refuses both files at once', () => {
    expect(() => natsAuthenticator({ nkeySeedFile: 'a', credsFile: 'b' })).toThrow('give one of the two');
  });
});
