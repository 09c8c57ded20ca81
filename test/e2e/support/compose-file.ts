// The compose files read as the static tests check them: parsed with compose's `${NAME:-default}`
// interpolation, each slicemesh service's program, config parser and NATS role, and the files a
// one-shot `slicemesh nats-auth` job writes into its volume (as paths inside that volume).

import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { parse } from 'yaml';
import { hintsConfig } from '@slicemesh/hints';
import { mcsConfig } from '@slicemesh/mcs';
import type { NatsRole, PermissionScope } from '@slicemesh/nats';
import { AUTH_CONF_FILE } from '@slicemesh/nats';
import { parseProxyAgentConfig } from '@slicemesh/proxy-agent';
import { publisherConfig } from '@slicemesh/publisher';
import { slicerConfig } from '@slicemesh/slicer';
import { watcherConfig } from '@slicemesh/watcher';
import { REPO_ROOT } from '../../../services/stack/src/index.ts';
import { parseNatsAuthCommandLine } from '../../../services/cli/src/nats-auth/args.ts';
import { seedFilesOf } from '@slicemesh/nats';
import { LEAFNODES_CONF, leafnodeRemoteFile } from '../../../services/cli/src/nats-auth/leafnode-files.ts';

export interface ComposeService {
  readonly image?: string;
  readonly build?: { readonly context: string; readonly dockerfile: string };
  readonly command?: readonly string[];
  readonly environment?: Readonly<Record<string, string>>;
  readonly depends_on?: Readonly<Record<string, { readonly condition?: string }>> | readonly string[];
  readonly volumes?: readonly string[];
  readonly ports?: readonly string[];
  readonly profiles?: readonly string[];
  readonly healthcheck?: unknown;
  readonly restart?: string;
  readonly networks?: Readonly<Record<string, { readonly aliases?: readonly string[] } | null>>;
}

export interface Compose {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

/** Compose's `${NAME:-default}` interpolation, from `env` or the default. */
export function interpolate(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([A-Z0-9_]+):-([^}]*)\}/g, (_, name: string, fallback: string) => env[name] ?? fallback);
}

/** The file's text. */
export const composeText = (file: string): string => readFileSync(join(REPO_ROOT, file), 'utf8');

/** `file` as compose reads it with `env` (every variable unset by default). */
export const composeWith = (file: string, env: Readonly<Record<string, string>> = {}): Compose => parse(interpolate(composeText(file), env), { merge: true }) as Compose;

/** `file` with its defaults, except that port variables keep their `${…:-port}` form (for publishedPorts). */
export const composeKeepingPorts = (file: string): Compose =>
  parse(composeText(file).replace(/\$\{SLICEMESH_(?![A-Z0-9_]*_PORT\b)[A-Z0-9_]+:-([^}]*)\}/g, '$1'), { merge: true }) as Compose;

/** The host ports a file publishes: each `${SLICEMESH_X_PORT:-4222}:4222`'s default. */
export function publishedPorts(c: Compose): string[] {
  return Object.values(c.services).flatMap((s) => (s.ports ?? []).map((p) => /^\$\{SLICEMESH_[A-Z0-9_]+_PORT:-(\d+)\}:\d+$/.exec(p)?.[1] ?? p));
}

/** Each slicemesh service's config parser, fed the service's compose environment. */
export const PARSERS: Readonly<Record<string, (env: Record<string, string>) => unknown>> = {
  watcher: (env) => watcherConfig.parse([], env),
  slicer: (env) => slicerConfig.parse([], env),
  hints: (env) => hintsConfig.parse([], env),
  publisher: (env) => publisherConfig.parse([], env),
  mcs: (env) => mcsConfig.parse([], env),
  'proxy-agent': (env) => parseProxyAgentConfig([], env),
};

/** The NATS role each program connects as. */
export const ROLE_OF: Readonly<Record<string, NatsRole>> = { watcher: 'watcher', slicer: 'slicer', hints: 'hints', publisher: 'publisher', mcs: 'mcs', 'proxy-agent': 'agent' };

/** The program a slicemesh service runs: `dist/<program>.js`. */
export const programOf = (s: ComposeService): string => /^dist\/([a-z-]+)\.js$/.exec(s.command?.[0] ?? '')?.[1] ?? '';

/** `volume:target[:ro]` mounts of a service's named volumes (bind mounts start with ./). */
export function volumeMounts(s: ComposeService): { source: string; target: string; readOnly: boolean }[] {
  return (s.volumes ?? [])
    .filter((v) => !v.startsWith('./'))
    .map((v) => {
      const [source = '', target = '', mode] = v.split(':');
      return { source, target, readOnly: mode === 'ro' };
    });
}

/** Where a path lies inside a mount of `volume` of `s`: its path relative to the volume, or undefined. */
export function inVolume(s: ComposeService, volume: string, path: string): { file: string; readOnly: boolean } | undefined {
  const m = volumeMounts(s).find((x) => x.source === volume && path.startsWith(`${x.target}/`));
  return m === undefined ? undefined : { file: posix.relative(m.target, path), readOnly: m.readOnly };
}

export interface KeyJob {
  /** The volume it writes, through a writable mount. */
  readonly volume: string;
  /** Where in the volume its files go. */
  readonly dir: string;
  readonly scopes: readonly PermissionScope[];
  /** Every seed it writes (path inside the volume) with its role and cluster. */
  readonly seeds: readonly { readonly file: string; readonly role: NatsRole; readonly cluster: string }[];
  /** Every other file it writes (auth.conf and the leafnode files), inside the volume. */
  readonly files: readonly string[];
  readonly command: readonly string[];
}

/** Compose service `name`, a `slicemesh nats-auth` job: what it writes, parsed as the CLI parses it. Throws when it is none. */
export function keyJobOf(c: Compose, name: string): KeyJob {
  const job = c.services[name];
  const [program, command, ...argv] = job?.command ?? [];
  if (job === undefined || program !== 'dist/slicemesh.js' || command !== 'nats-auth') throw new Error(`${name} is no slicemesh nats-auth job`);
  const cl = parseNatsAuthCommandLine(argv, { ...(job.environment ?? {}) });
  const mount = volumeMounts(job).find((m) => cl.out === m.target || cl.out.startsWith(`${m.target}/`));
  if (mount === undefined || mount.readOnly) throw new Error(`${name} writes ${cl.out}, which is no writable volume mount`);
  const rel = (p: string): string => posix.relative(mount.target, p);
  const seeds = seedFilesOf(cl.out, cl.agents, cl.scopes.map((s) => s.cluster)).map((f) => ({ file: rel(f.path), role: f.role, cluster: f.cluster }));
  const leafFiles = cl.leafnodes === undefined ? [] : [LEAFNODES_CONF, ...cl.leafnodes.names.map(leafnodeRemoteFile)];
  const files = [AUTH_CONF_FILE, ...leafFiles].map((f) => rel(posix.join(cl.out, f)));
  return { volume: mount.source, dir: rel(cl.out), scopes: cl.scopes, seeds, files, command: [command, ...argv] };
}

/** The files a NATS server's configuration (its mount at /etc/nats/nats.conf) includes, as absolute paths in the container. */
export function serverIncludes(s: ComposeService): { conf: string; text: string; includes: string[] } {
  const conf = ((s.volumes ?? []).find((v) => v.split(':')[1] === '/etc/nats/nats.conf') ?? '').split(':')[0] ?? '';
  const text = readFileSync(join(REPO_ROOT, conf), 'utf8');
  const includes = [...text.matchAll(/^\s*include\s+"([^"]+)"/gm)].map((m) => posix.join('/etc/nats', m[1] as string));
  return { conf, text, includes };
}
