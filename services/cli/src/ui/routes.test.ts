// The web view's routes over the engine adapter, without a socket: each JSON answer is the
// engine's own (stateAt, timeline, whyNode on libs/history's recorded scenario, held in memory),
// and bad input gets the status and message a person can act on (habit 9: named cases).
import { describe, expect, it } from 'vitest';
import { logSettings, memoryLog, resolvePoint, stateAt, timeline, whyNode } from '@slicemesh/history';
import { scenarioEvents } from '../../../../libs/history/testing/scenario.ts';
import { UsageError } from '../cli-error.ts';
import { runCli } from '../test-io.ts';
import { parseUiCommandLine } from './command.ts';
import { ipOfEndpoint, uiEngineOf } from './engine.ts';
import type { PageEndpointWhy, PageState, PageWhy } from './page-data.ts';
import type { Reply } from './routes.ts';
import { route } from './routes.ts';

const log = () => memoryLog({ settings: logSettings({ cluster: 'demo' }), events: scenarioEvents('demo'), description: 'recorded scenario' });
const ASSETS = new Map([['/', { type: 'text/html; charset=utf-8', body: Buffer.from('<!doctype html>page') }]]);

async function get(path: string, method = 'GET'): Promise<Reply & { json: () => unknown }> {
  const r = await route(uiEngineOf(log()), ASSETS, method, path);
  return { ...r, json: () => JSON.parse(String(r.body)) as unknown };
}

describe('web view routes', () => {
  it('serves the page at / and /index.html', async () => {
    for (const path of ['/', '/index.html']) expect(String((await get(path)).body)).toBe('<!doctype html>page');
  });

  it('summary: the source and the first and last event', async () => {
    expect((await get('/api/summary')).json()).toEqual({ source: 'recorded scenario', first: { seq: 1, time: '2026-11-26T10:00:00.000Z' }, latest: { seq: 18, time: '2026-11-26T10:17:00.000Z' } });
  });

  it("timeline: the engine's buckets", async () => {
    const r = await get('/api/timeline?buckets=6');
    expect(r.status).toBe(200);
    expect(r.json()).toEqual(JSON.parse(JSON.stringify(await timeline(log(), 6))));
  });

  it('state at a sequence and at a time: the services, slices and nodes stateAt holds', async () => {
    const src = log();
    for (const spec of ['12', '2026-11-26T10:11:30Z']) {
      const page = (await get(`/api/state?at=${encodeURIComponent(spec)}`)).json() as PageState;
      const s = await stateAt(src, await resolvePoint(src, spec));
      expect(page.at).toEqual({ seq: 12, time: '2026-11-26T10:11:00.000Z' });
      expect(page.services.map((x) => `${x.namespace}/${x.name}`)).toEqual(s.services.map((x) => `${x.namespace}/${x.name}`));
      expect(page.services[0]?.slices.map((x) => x.name)).toEqual(s.services[0]?.slices.map((x) => x.metadata.name));
      expect(page.services[0]?.slices[0]?.endpoints.map((e) => [e.address, e.zone, e.hints])).toEqual(
        s.services[0]?.slices[0]?.endpoints.map((e) => [e.addresses[0], e.zone, (e.hints?.forZones ?? []).map((z) => z.name)]),
      );
      expect(page.services[0]?.zoneViews.map((v) => v.zone)).toEqual(Object.keys(s.services[0]?.zoneViews ?? {}).sort());
      expect(page.nodes).toEqual([
        { name: 'worker-a-1', zone: 'zone-a' },
        { name: 'worker-b-1', zone: 'zone-b' },
        { name: 'worker-c-1', zone: 'zone-c' },
      ]);
    }
  });

  it('state defaults to the latest point', async () => {
    expect(((await get('/api/state')).json() as PageState).at.seq).toBe(18);
  });

  it('why: whyNode for the node and Service, with the address without its port beside it', async () => {
    const src = log();
    const page = (await get('/api/why?at=latest&node=worker-b-1&service=shop/web')).json() as PageWhy;
    const w = whyNode(await stateAt(src, await resolvePoint(src, 'latest')), 'worker-b-1', { namespace: 'shop', name: 'web' });
    expect(page.zone).toBe('zone-b');
    expect(page.notes).toEqual(w.notes);
    expect(page.endpoints.map((e) => [e.address, e.sends, e.reasons])).toEqual(w.endpoints.map((e) => [e.address, e.sends, e.reasons]));
    expect(page.endpoints.filter((e) => e.sends).map((e) => e.ip)).toEqual(['10.1.0.5', '10.1.0.7']);
  });

  it('endpoint: every node with whyNode\'s answer for that endpoint', async () => {
    const src = log();
    const state = await stateAt(src, await resolvePoint(src, 'latest'));
    const page = (await get('/api/endpoint?service=shop/web&ip=10.1.0.5')).json() as PageEndpointWhy;
    expect(page.nodes.map((n) => n.node)).toEqual(state.nodes.map((n) => n.name));
    for (const n of page.nodes) {
      const e = whyNode(state, n.node, { namespace: 'shop', name: 'web' }).endpoints.find((x) => x.address === '10.1.0.5:8080');
      expect([n.sends, n.reasons]).toEqual([e?.sends, e?.reasons]);
    }
    expect(page.nodes.filter((n) => n.sends).map((n) => n.node)).toEqual(['worker-b-1']);
  });

  const errors: { name: string; path: string; method?: string; status: number; error: RegExp }[] = [
    { name: 'a point that is not one', path: '/api/state?at=yesterday', status: 400, error: /^a point is a sequence number, an RFC 3339 time, "first" or "latest"; got "yesterday"$/ },
    { name: 'a time before the log', path: '/api/state?at=2020-01-01T00:00:00Z', status: 400, error: /is before the log's first event/ },
    { name: 'buckets out of range', path: '/api/timeline?buckets=0', status: 400, error: /^buckets must be a whole number in 1\.\.500/ },
    { name: 'why without a node', path: '/api/why?service=shop/web', status: 400, error: /^missing parameter node/ },
    { name: 'why with a malformed service', path: '/api/why?node=worker-a-1&service=web', status: 400, error: /^service must be <namespace>\/<name>/ },
    { name: 'why for an unknown service', path: '/api/why?node=worker-a-1&service=shop/nope', status: 404, error: /^service shop\/nope is not in the log at sequence 18$/ },
    { name: 'why for a service not yet created at the point', path: '/api/why?at=12&node=worker-a-1&service=shop/api', status: 404, error: /^service shop\/api is not in the log at sequence 12$/ },
    { name: 'an address that is no endpoint of the service', path: '/api/endpoint?service=shop/web&ip=10.9.9.9', status: 404, error: /^10\.9\.9\.9 is not an endpoint of shop\/web that a node programs at sequence 18$/ },
    { name: 'endpoint without an address', path: '/api/endpoint?service=shop/web', status: 400, error: /^missing parameter ip/ },
    { name: 'an unknown endpoint', path: '/api/nothing', status: 404, error: /^no endpoint \/api\/nothing/ },
    { name: 'a write', path: '/api/state', method: 'POST', status: 405, error: /only reads/ },
  ];
  for (const c of errors) {
    it(`answers ${c.status} for ${c.name}`, async () => {
      const r = await get(c.path, c.method);
      expect(r.status).toBe(c.status);
      expect(r.type).toContain('application/json');
      expect((r.json() as { error: string }).error).toMatch(c.error);
    });
  }

  it('answers an unknown page with an HTML error page', async () => {
    const r = await get('/settings');
    expect(r.status).toBe(404);
    expect(r.type).toContain('text/html');
    expect(String(r.body)).toContain('There is no page at /settings.');
  });

  it('escapes what it echoes in an HTML error page', async () => {
    expect(String((await get('/<script>')).body)).not.toContain('<script>');
  });
});

describe('ipOfEndpoint', () => {
  const cases = [
    { name: 'IPv4', address: '10.1.0.2:8080', ip: '10.1.0.2' },
    { name: 'IPv6 in brackets', address: '[fd00::2]:8080', ip: 'fd00::2' },
    { name: 'no port', address: '10.1.0.2', ip: '10.1.0.2' },
  ];
  for (const c of cases) it(c.name, () => expect(ipOfEndpoint(c.address)).toBe(c.ip));
});

describe('slicemesh ui command line', () => {
  it('defaults: port 8080 on 127.0.0.1, the live log as slicemesh log opens it', () => {
    expect(parseUiCommandLine([])).toEqual({ help: false, port: 8080, host: '127.0.0.1', source: {} });
  });

  it('a file, a port and a host', () => {
    expect(parseUiCommandLine(['-f', 'incident.slog', '--port', '0', '--host', '0.0.0.0'])).toEqual({ help: false, port: 0, host: '0.0.0.0', source: { file: 'incident.slog' } });
  });

  it("the live log's flags are slicemesh log's", () => {
    const cl = parseUiCommandLine(['--nats-url', 'nats://n:4222', '--kube-stream', 'KUBE_r1', '--subject-prefix', 'r1.', '--cluster', 'c1', '--db-schema', 's1']);
    expect(cl.source).toEqual({ 'nats-url': 'nats://n:4222', 'kube-stream': 'KUBE_r1', 'subject-prefix': 'r1.', cluster: 'c1', 'db-schema': 's1' });
  });

  const bad = [
    { name: 'a port that is not a number', argv: ['--port', 'x'], message: /--port must be a port number/ },
    { name: 'a port too large', argv: ['--port', '70000'], message: /--port must be a port number/ },
    { name: 'an unknown flag', argv: ['--speed', '3'], message: /^ui: Unknown option '--speed'/ },
    { name: 'an argument', argv: ['shop/web'], message: /^ui: Unexpected argument/ },
  ];
  for (const c of bad) {
    it(`refuses ${c.name}`, () => {
      expect(() => parseUiCommandLine(c.argv)).toThrow(UsageError);
      expect(() => parseUiCommandLine(c.argv)).toThrow(c.message);
    });
  }

  it('runs in-process: a log that cannot be opened is one line and exit 2', async () => {
    const r = await runCli(['ui', '-f', '/nonexistent/incident.slog', '--port', '0']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^slicemesh: cannot read \/nonexistent\/incident\.slog: .*\n$/);
  });

  it('--help prints the usage', async () => {
    const r = await runCli(['ui', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('slicemesh ui [--port N] [--host H] [-f FILE | live flags]');
  });
});
