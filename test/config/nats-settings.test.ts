// Every service reads NATS_URL with the one parser of @slicemesh/nats (a comma-separated list,
// a clear error naming the bad entry) and, where it creates streams or buckets, NATS_REPLICAS.
import { describe, expect, it } from 'vitest';
import { hintsConfig } from '@slicemesh/hints';
import { parseProxyAgentConfig } from '@slicemesh/proxy-agent';
import { publisherConfig } from '@slicemesh/publisher';
import { slicerConfig } from '@slicemesh/slicer';
import { watcherConfig } from '@slicemesh/watcher';

type Env = Record<string, string>;
const BASE: Env = { CLUSTER: 'c1', NODE_NAME: 'n1', KUBE_SERVER: 'http://127.0.0.1:8001' };
const services: [string, (argv: string[], env: Env) => { natsUrl: string; natsReplicas?: number }][] = [
  ['watcher', (a, e) => watcherConfig.parse(a, { ...BASE, ...e })],
  ['slicer', (a, e) => slicerConfig.parse(a, { ...BASE, ...e })],
  ['hints', (a, e) => hintsConfig.parse(a, { ...BASE, ...e })],
  ['publisher', (a, e) => publisherConfig.parse(a, { ...BASE, ...e })],
  ['proxy-agent', (a, e) => parseProxyAgentConfig(a, { ...BASE, ...e })],
];
const CREATORS = new Set(['watcher', 'slicer', 'hints', 'publisher']);

describe.each(services)('%s', (name, parse) => {
  it.each([
    ['nats://127.0.0.1:14221,nats://127.0.0.1:14222,nats://127.0.0.1:14223', 'nats://127.0.0.1:14221,nats://127.0.0.1:14222,nats://127.0.0.1:14223'],
    ['nats-0:4222, nats-1:4222 ,nats-2:4222', 'nats-0:4222,nats-1:4222,nats-2:4222'],
    ['tls://user:pw@nats.example:4222', 'tls://user:pw@nats.example:4222'],
  ])('NATS_URL=%s', (text, want) => {
    expect(parse([], { NATS_URL: text }).natsUrl).toBe(want);
    expect(parse(['--nats-url', text], {}).natsUrl).toBe(want);
  });

  it('the default is the local server', () => {
    expect(parse([], {}).natsUrl).toBe('nats://127.0.0.1:4222');
  });

  it('names the bad entry', () => {
    expect(() => parse([], { NATS_URL: 'nats://a:4222,foo bar' })).toThrow('NATS_URL entry 2 "foo bar" is not a NATS URL (contains white space');
    expect(() => parse([], { NATS_URL: 'http://a:4222' })).toThrow('entry 1 "http://a:4222" is not a NATS URL (scheme http:// is not nats:// or tls://)');
  });

  it.runIf(CREATORS.has(name))('NATS_REPLICAS: unset by default (new streams get 1, existing keep theirs), 1..5', () => {
    expect(parse([], {}).natsReplicas).toBeUndefined();
    expect(parse([], { NATS_REPLICAS: '3' }).natsReplicas).toBe(3);
    expect(parse(['--nats-replicas', '3'], {}).natsReplicas).toBe(3);
    expect(() => parse([], { NATS_REPLICAS: '0' })).toThrow('below the minimum 1');
    expect(() => parse([], { NATS_REPLICAS: '7' })).toThrow('above the maximum 5');
  });
});
