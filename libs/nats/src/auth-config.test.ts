import { describe, expect, it } from 'vitest';
import { nkeys } from '@nats-io/transport-node';
import { generateRoleNkeys, isUserNkey, renderAuthorization } from './auth-config.ts';
import { NATS_ROLES } from './permissions.ts';
import { DEFAULT_NAMES } from './streams.ts';

describe('generateRoleNkeys', () => {
  it('gives each role its own user key pair whose seed yields its public key', () => {
    const keys = generateRoleNkeys(NATS_ROLES);
    expect(keys.map((k) => k.role)).toEqual(NATS_ROLES);
    expect(new Set(keys.map((k) => k.nkey)).size).toBe(NATS_ROLES.length);
    for (const k of keys) {
      expect(k.nkey).toMatch(/^U[A-Z2-7]{55}$/);
      expect(k.seed).toMatch(/^SU[A-Z2-7]{56}$/);
      expect(nkeys.fromSeed(new TextEncoder().encode(k.seed)).getPublicKey()).toBe(k.nkey);
    }
  });
});

describe('isUserNkey', () => {
  const [user] = generateRoleNkeys(['agent']);
  it.each([
    ['a generated user key', user!.nkey, true],
    ['an account key', nkeys.createAccount().getPublicKey(), false],
    ['a seed', user!.seed, false],
    ['a key with a broken checksum', `${user!.nkey.slice(0, -1)}${user!.nkey.endsWith('A') ? 'B' : 'A'}`, false],
    ['an empty string', '', false],
  ])('%s: %s', (_name, key, want) => {
    expect(isUserNkey(key)).toBe(want);
  });
});

describe('renderAuthorization', () => {
  const [watcher, agent] = generateRoleNkeys(['watcher', 'agent']);

  it('renders one nkey user per entry with its role\'s permissions, subjects quoted', () => {
    const text = renderAuthorization([watcher!, agent!], { cluster: 'c1' });
    expect(text.startsWith('authorization {\n  users = [\n')).toBe(true);
    const lines = text.split('\n');
    const userLine = (key: string) => lines.findIndex((l) => l.includes(`{ nkey: "${key}", permissions: {`));
    const w = userLine(watcher!.nkey);
    const a = userLine(agent!.nkey);
    expect(w).toBeGreaterThan(0);
    expect(a).toBeGreaterThan(w);
    const watcherBlock = lines.slice(w, a).join('\n');
    const agentBlock = lines.slice(a).join('\n');
    expect(watcherBlock).toContain('"kube.c1.>"');
    expect(agentBlock).not.toContain('"kube.c1.>", ');
    expect(agentBlock).toMatch(/deny: \[[^\]]*"\$KV\.>"/);
    expect(agentBlock).toContain('"$JS.API.CONSUMER.CREATE.KV_views.*.$KV.views.c1.>"');
    expect(agentBlock).toContain('subscribe: { allow: ["_INBOX_agent.>", "feed.svc.c1.>", "feed.views.c1.>"] }');
  });

  it('never contains a seed', () => {
    const text = renderAuthorization([watcher!, agent!], { cluster: 'c1' });
    expect(text).not.toContain(watcher!.seed);
    expect(text).not.toMatch(/"SU/);
  });

  const [hubA, hubB] = generateRoleNkeys(['slicer', 'slicer']);
  const userBlock = (text: string, key: string): string => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes(`{ nkey: "${key}"`));
    return lines.slice(at - 1, at + 4).join('\n');
  };
  it.each([
    {
      name: 'each user of a shared block gets its own cluster\'s subjects and is named with it',
      users: [{ ...hubA!, scope: { cluster: 'cluster-a', names: { ...DEFAULT_NAMES, prefix: 'a.' } } }, { ...hubB!, scope: { cluster: 'cluster-b', names: { ...DEFAULT_NAMES, prefix: 'b.' } } }],
      scope: undefined,
      want: { [hubA!.nkey]: ['# slicer of cluster "cluster-a"', '"a.slices.cluster-a.>"'], [hubB!.nkey]: ['# slicer of cluster "cluster-b"', '"b.slices.cluster-b.>"'] },
      not: { [hubA!.nkey]: ['cluster-b'], [hubB!.nkey]: ['cluster-a'] },
    },
    {
      name: "a user's own scope wins over the block's; the others take the block's",
      users: [{ ...hubA!, scope: { cluster: 'cluster-a' } }, hubB!],
      scope: { cluster: 'local' },
      want: { [hubA!.nkey]: ['# slicer of cluster "cluster-a"', '"slices.cluster-a.>"'], [hubB!.nkey]: ['# slicer\n', '"slices.local.>"'] },
      not: { [hubA!.nkey]: ['local'], [hubB!.nkey]: ['cluster-a'] },
    },
  ])('$name', ({ users, scope, want, not }) => {
    const text = renderAuthorization(users, scope);
    for (const [key, parts] of Object.entries(want)) for (const p of parts) expect(userBlock(text, key), p).toContain(p);
    for (const [key, parts] of Object.entries(not)) for (const p of parts) expect(userBlock(text, key), p).not.toContain(p);
  });

  it.each([
    { name: 'a leaf\'s mcs reaches the exports bucket through the hub\'s domain', exports: { domain: 'hub' }, want: ['"$JS.hub.API.STREAM.INFO.KV_exports"', '"$JS.hub.API.$KV.exports.>"'], not: ['"$JS.API.STREAM.INFO.KV_exports"'] },
    { name: 'an mcs beside the exports bucket uses its own server\'s API, and the bucket named', exports: { bucket: 'set1' }, want: ['"$JS.API.STREAM.INFO.KV_set1"', '"$KV.set1.>"'], not: ['KV_exports"', 'KV_exports.', '$JS.hub.'] },
  ])('$name', ({ exports, want, not }) => {
    const [mcs] = generateRoleNkeys(['mcs']);
    const text = renderAuthorization([mcs!], { cluster: 'c1', exports });
    for (const w of want) expect(text).toContain(w);
    for (const n of not) expect(text).not.toContain(n);
  });

  it.each([
    ['a seed instead of a public key', [{ role: 'agent' as const, nkey: generateRoleNkeys(['agent'])[0]!.seed }], 'must be a public user nkey'],
    ['an account key', [{ role: 'agent' as const, nkey: nkeys.createAccount().getPublicKey() }], 'must be a public user nkey'],
    ['a key given twice', [watcher!, { role: 'agent' as const, nkey: watcher!.nkey }], 'is given twice'],
  ])('refuses %s', (_name, users, message) => {
    expect(() => renderAuthorization(users, { cluster: 'c1' })).toThrow(message);
  });

  it('refuses a user with no cluster when the block has none', () => {
    expect(() => renderAuthorization([{ ...watcher!, scope: { cluster: 'a' } }, agent!])).toThrow(/the agent user U[A-Z2-7]+ has no cluster/);
  });
});
