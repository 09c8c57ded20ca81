import { describe, expect, it } from 'vitest';
import { natsServerOptions, parseNatsServers, parseNatsUrlSetting, redactNatsUrl } from './servers.ts';

describe('parseNatsServers', () => {
  it.each([
    ['nats://127.0.0.1:4222', ['nats://127.0.0.1:4222']],
    ['nats://127.0.0.1:14221,nats://127.0.0.1:14222,nats://127.0.0.1:14223', ['nats://127.0.0.1:14221', 'nats://127.0.0.1:14222', 'nats://127.0.0.1:14223']],
    [' nats://a:4222 , tls://b:4222 ', ['nats://a:4222', 'tls://b:4222']],
    ['a:4222,b:4223', ['a:4222', 'b:4223']],
    ['nats-0.nats.svc', ['nats-0.nats.svc']],
    ['nats://user:p%40ss@h:4222', ['nats://user:p%40ss@h:4222']],
    ['NATS://h:1', ['NATS://h:1']],
    ['nats://[::1]:4222', ['nats://[::1]:4222']],
    ['nats://h:4222/', ['nats://h:4222/']],
    ['nats://a:1,,nats://b:2,', ['nats://a:1', 'nats://b:2']],
  ])('%s', (text, want) => {
    expect(parseNatsServers(text)).toEqual(want);
  });

  it.each([
    ['nats://a:4222,foo bar', 'NATS_URL entry 2 "foo bar" is not a NATS URL (contains white space; expected nats://host:port, tls://host:port or host:port, comma-separated)'],
    ['http://h:4222', 'NATS_URL entry 1 "http://h:4222" is not a NATS URL (scheme http:// is not nats:// or tls://)'],
    ['nats://h:99999', 'NATS_URL entry 1 "nats://h:99999" is not a NATS URL (expected nats://host:port, tls://host:port or host:port, comma-separated)'],
    ['nats://:4222', 'NATS_URL entry 1 "nats://:4222" is not a NATS URL (expected'],
    ['a:1,b:2,nats://h:4222/x', 'NATS_URL entry 3 "nats://h:4222/x" is not a NATS URL (a server address has no path (/x)'],
    ['nats://h:4222?x=1', 'entry 1 "nats://h:4222?x=1" is not a NATS URL (a server address has no query'],
    ['nats://h:0', 'port 0'],
    ['nats://h:abc', 'NATS_URL entry 1 "nats://h:abc" is not a NATS URL'],
    ['nats://u:secret@h:abc', 'NATS_URL entry 1 "nats://u:***@h:abc" is not a NATS URL'],
    ['', 'NATS_URL names no server'],
    [' , ', 'NATS_URL names no server'],
  ])('%s is refused', (text, message) => {
    expect(() => parseNatsServers(text)).toThrow(message);
  });

  it('names the setting it parses', () => {
    expect(() => parseNatsServers('x y', '--nats-url')).toThrow('--nats-url entry 1 "x y" is not a NATS URL');
  });

  it('parseNatsUrlSetting gives the list back comma-joined', () => {
    expect(parseNatsUrlSetting(' nats://a:1, b:2 ')).toBe('nats://a:1,b:2');
  });
});

describe('natsServerOptions', () => {
  it.each([
    [['nats://127.0.0.1:4222'], { servers: ['127.0.0.1:4222'] }],
    [['nats://a', 'b', 'c:5'], { servers: ['a:4222', 'b:4222', 'c:5'] }],
    [['nats://u:p%40ss@a:1', 'nats://b:2'], { servers: ['a:1', 'b:2'], user: 'u', pass: 'p@ss' }],
    [['nats://u:p@a:1', 'nats://u:p@b:2'], { servers: ['a:1', 'b:2'], user: 'u', pass: 'p' }],
    [['nats://s3cret@a:1'], { servers: ['a:1'], token: 's3cret' }],
    [['u:p@a:1'], { servers: ['a:1'], user: 'u', pass: 'p' }],
    [['nats://a:1', 'tls://b:2'], { servers: ['a:1', 'b:2'], tls: {} }],
    [['nats://[::1]:4222'], { servers: ['[::1]:4222'] }],
  ])('%j', (entries, want) => {
    expect(natsServerOptions(entries)).toEqual(want);
  });

  it('refuses different credentials on two servers', () => {
    expect(() => natsServerOptions(['nats://u:p@a:1', 'nats://v:p@b:2'])).toThrow('NATS_URL entry 2 has other credentials than entry 1');
  });
});

describe('redactNatsUrl', () => {
  it.each([
    ['nats://a:1', 'nats://a:1'],
    ['nats://u:secret@a:1,nats://b:2', 'nats://u:***@a:1,nats://b:2'],
    ['nats://tok@a:1', 'nats://***@a:1'],
    ['u:pw@a:1', 'u:***@a:1'],
  ])('%s', (text, want) => {
    expect(redactNatsUrl(text)).toBe(want);
  });
});
