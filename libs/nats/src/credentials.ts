// The client side of "NATS locked down": the credentials a process connects with, read from a
// file named by a setting (NATS_NKEY_SEED_FILE or NATS_CREDS_FILE). Every problem is reported
// naming the setting and the file, never the secret.

import { readFileSync } from 'node:fs';
import { credsAuthenticator, nkeyAuthenticator, nkeys } from '@nats-io/transport-node';
import type { Authenticator } from '@nats-io/transport-node';

/** The credential file settings, as named in errors. */
export const NKEY_SEED_FILE_ENV = 'NATS_NKEY_SEED_FILE';
export const CREDS_FILE_ENV = 'NATS_CREDS_FILE';

/** A credentials file that cannot be used: missing, unreadable or not what the setting wants. */
export class NatsCredentialsError extends Error {
  readonly setting: string;
  readonly file: string;
  readonly reason: string;
  override readonly name = 'NatsCredentialsError';
  constructor(setting: string, file: string, reason: string, options?: ErrorOptions) {
    super(`${setting} ${file}: ${reason}`, options);
    this.setting = setting;
    this.file = file;
    this.reason = reason;
  }
}

export interface CredentialFiles {
  readonly nkeySeedFile?: string | undefined;
  readonly credsFile?: string | undefined;
}

function readSecret(setting: string, file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new NatsCredentialsError(setting, file, `cannot read it (${code ?? (err instanceof Error ? err.message : String(err))})`, { cause: err });
  }
}

/** The user nkey seed in `file`: one `SU...` line (surrounding white space ignored). */
function seedAuthenticator(file: string): Authenticator {
  const text = new TextDecoder().decode(readSecret(NKEY_SEED_FILE_ENV, file)).trim();
  // Neither the text nor the library's message (which may quote it) goes into the error.
  if (!text.startsWith('SU')) throw new NatsCredentialsError(NKEY_SEED_FILE_ENV, file, 'does not hold a user nkey seed (one line starting with SU)');
  const seed = new TextEncoder().encode(text);
  try {
    nkeys.fromSeed(seed).getPublicKey();
  } catch {
    throw new NatsCredentialsError(NKEY_SEED_FILE_ENV, file, 'holds an invalid user nkey seed (bad encoding or checksum)');
  }
  return nkeyAuthenticator(seed);
}

/** A .creds file: the user JWT and nkey seed blocks `nsc` writes. */
function credsFileAuthenticator(file: string): Authenticator {
  const creds = readSecret(CREDS_FILE_ENV, file);
  const auth = credsAuthenticator(creds);
  try {
    // Parses the file and signs a nonce now, so a bad file fails here rather than at connect.
    auth('probe');
  } catch {
    throw new NatsCredentialsError(CREDS_FILE_ENV, file, 'is not a NATS .creds file (a user JWT and a user nkey seed block)');
  }
  return auth;
}

/**
 * The client authenticator for the given files, or undefined without any (no credentials, as
 * before). Throws NatsCredentialsError when a file is missing, unreadable or invalid, or when
 * both are given.
 */
export function natsAuthenticator(files: CredentialFiles): Authenticator | undefined {
  const { nkeySeedFile, credsFile } = files;
  if (nkeySeedFile !== undefined && credsFile !== undefined) {
    throw new NatsCredentialsError(`${NKEY_SEED_FILE_ENV} and ${CREDS_FILE_ENV}`, `${nkeySeedFile}, ${credsFile}`, 'give one of the two');
  }
  if (nkeySeedFile !== undefined) return seedAuthenticator(nkeySeedFile);
  if (credsFile !== undefined) return credsFileAuthenticator(credsFile);
  return undefined;
}
