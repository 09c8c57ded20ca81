// The web view in a real browser: `slicemesh ui -f FILE`, run from its bundle as users get it,
// on a log exported by the engine itself (libs/history's recorded scenario: three zones, Service
// shop/web with topology-mode Auto, a pod becoming Ready, node worker-a-1 moving from zone-a to
// zone-c at seq 13, shop/api from seq 16). Debian's chromium, driven by playwright-core, opens
// the page; what it shows is checked against the engine's own answers (stateAt, timeline,
// whyNode) at each point, and its screenshots are decoded and checked.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogSource, StateAt } from '@slicemesh/history';
import { exportLog, logSettings, memoryLog, openLogFile, resolvePoint, stateAt, streamSink, timeline, whyNode } from '@slicemesh/history';
import { scenarioEvents } from '../../libs/history/testing/scenario.ts';
import { buildDist } from '../../scripts/build.ts';
import type { Browser } from './chromium.ts';
import { chromiumMissing, countInk, launchBrowser, pngSize } from './chromium.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where the screenshots are kept for a person to look at. */
const SHOTS = process.env['UI_SCREENSHOTS'] ?? join(tmpdir(), 'slicemesh-ui-screenshots');
const WIDTH = 1280;
const HEIGHT = 800;
/** The chart's background (style.css #chart): a blank chart is all this colour. */
const CHART_BACKGROUND = [0xfb, 0xfc, 0xfd] as const;

/**
 * The bundles this test builds and runs: a dist/ of its own inside the repository (so they find
 * node_modules), leaving the shared dist/ to the tests that run beside this one.
 */
const BUILT = join(ROOT, '.slicemesh', `ui-e2e-${process.pid}`);

/** Starts `node <BUILT>/dist/slicemesh.js ui …` and resolves with the address it prints. */
function startUi(args: readonly string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--enable-source-maps', join(BUILT, 'dist', 'slicemesh.js'), 'ui', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = / at (http:\/\/\S+)\n/.exec(out);
      if (m) resolve({ child, url: m[1] as string });
    });
    child.stderr?.on('data', (c: Buffer) => void (err += c.toString()));
    child.once('exit', (code) => reject(new Error(`slicemesh ui exited with ${code}: ${err}${out}`)));
  });
}

const missing = chromiumMissing();
if (missing !== undefined) {
  describe('web view in chromium', () => it.skip(missing, () => {}));
} else {
  describe('web view in chromium', () => {
    let dir: string;
    let file: string;
    let src: LogSource;
    let ui: { child: ChildProcess; url: string } | undefined;
    let browser: Browser | undefined;
    const WEB = { namespace: 'shop', name: 'web' };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'slicemesh-ui-'));
      file = join(dir, 'incident.slog');
      // The recorded log, written by the engine's own export.
      const recorded = memoryLog({ settings: logSettings({ cluster: 'demo' }), events: scenarioEvents('demo'), description: 'recorded scenario' });
      const target = streamSink(file, false);
      await exportLog(recorded, target.sink, { now: '2026-11-26T12:00:00Z' });
      await target.close();
      src = await openLogFile(file);
      await buildDist(ROOT, join(BUILT, 'dist'));
      ui = await startUi(['--port', '0', '-f', file]);
      browser = await launchBrowser(WIDTH, HEIGHT);
      await mkdir(SHOTS, { recursive: true });
    });

    afterAll(async () => {
      await browser?.close();
      ui?.child.kill('SIGTERM');
      await src?.close();
      await rm(dir, { recursive: true, force: true });
      await rm(BUILT, { recursive: true, force: true });
    });

    const page = () => (browser as Browser).page;
    const shown = (seq: number) => page().waitForSelector(`body[data-seq="${seq}"]:not([data-busy])`, { timeout: 20_000 });
    const expectedAt = async (spec: string): Promise<StateAt> => stateAt(src, await resolvePoint(src, spec));

    /** What the page shows: services with their slice counts, and each node's zone. */
    async function readPage() {
      const services = await page().$$eval('#service-list li[data-service]', (lis) => lis.map((li) => ({ key: li.getAttribute('data-service'), count: li.querySelector('.count')?.textContent ?? '' })));
      const nodes = await page().$$eval('#zone-list .zone', (zs) => zs.flatMap((z) => [...z.querySelectorAll('[data-node]')].map((n) => ({ name: n.getAttribute('data-node'), zone: z.getAttribute('data-zone') }))));
      return { services, nodes };
    }

    /** The same, from the engine's state. */
    function expectedPage(s: StateAt) {
      return {
        services: s.services.map((x) => {
          const eps = x.slices.reduce((n, sl) => n + sl.endpoints.reduce((m, e) => m + e.addresses.length, 0), 0);
          return { key: `${x.namespace}/${x.name}`, count: `${x.slices.length} slice${x.slices.length === 1 ? '' : 's'} · ${eps} ep` };
        }),
        nodes: [...s.nodes].sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0)).map((n) => ({ name: n.name, zone: n.zone === '' ? '(no zone)' : n.zone })),
      };
    }

    it('shows the latest state as the engine computes it: services, slice counts, nodes by zone', async () => {
      const { url } = ui as { url: string };
      await page().goto(url);
      const latest = await expectedAt('latest');
      expect(latest.at.seq).toBe(18);
      await shown(18);
      const onPage = await readPage();
      expect(onPage).toEqual(expectedPage(latest));
      expect(onPage.services.map((s) => s.key)).toEqual(['shop/api', 'shop/web']);
      // worker-a-1 moved to zone-c at seq 13.
      expect(onPage.nodes).toContainEqual({ name: 'worker-a-1', zone: 'zone-c' });
      expect(await page().textContent('#source')).toBe(file);
      expect(await page().textContent('#point')).toContain('seq 18');
    });

    it('moves through time with the slider and the chart, showing what stateAt says at each point', async () => {
      await page().click('#service-list li[data-service="shop/web"]');
      const chart = page().locator('#chart');
      const chartLatest = await chart.screenshot();

      await page().locator('#slider').fill('12');
      await shown(12);
      const at12 = await expectedAt('12');
      const onPage = await readPage();
      expect(onPage).toEqual(expectedPage(at12));
      // Before seq 13, worker-a-1 is still in zone-a, and shop/api does not exist yet.
      expect(onPage.nodes).toContainEqual({ name: 'worker-a-1', zone: 'zone-a' });
      expect(onPage.services.map((s) => s.key)).toEqual(['shop/web']);
      const rows = await page().$$eval('#slices tr.endpoint', (trs) => trs.map((tr) => tr.getAttribute('data-address')));
      expect(rows).toEqual(at12.services[0]?.slices.flatMap((s) => s.endpoints.flatMap((e) => e.addresses)));

      // The chart shows where the point is: its picture at seq 12 differs from the one at 18.
      const chart12 = await chart.screenshot();
      expect(chart12.equals(chartLatest)).toBe(false);
      await writeFile(join(SHOTS, 'chart-seq-12.png'), chart12);
      await writeFile(join(SHOTS, 'chart-latest.png'), chartLatest);

      // Quick moves: the answer for the last one is what stays, whatever order answers come in.
      await page().locator('#slider').fill('5');
      await page().locator('#slider').fill('16');
      await shown(16);
      expect(await readPage()).toEqual(expectedPage(await expectedAt('16')));

      // A bar moves to the end of its bucket, as the engine's timeline cuts the log.
      const buckets = await timeline(src, 80);
      const third = buckets.filter((b) => b.events > 0)[2];
      expect(third).toBeDefined();
      await page().locator(`#chart rect[data-to="${third?.to.seq}"]`).first().click();
      await shown(third?.to.seq as number);
      expect(await readPage()).toEqual(expectedPage(await expectedAt(String(third?.to.seq))));
    });

    it('explains on a click why a node sends to an endpoint or not, in whyNode\'s words', async () => {
      await page().click('#to-latest');
      await shown(18);
      await page().click('#service-list li[data-service="shop/web"]');
      await page().click('[data-node="worker-b-1"]');
      await page().waitForSelector('#why table');
      await page().click('#slices tr.endpoint[data-address="10.1.0.5"]');
      // The click re-renders the why table with the endpoint marked: read it once that is done.
      await page().waitForSelector('#why tbody tr.selected');
      const expected = whyNode(await expectedAt('latest'), 'worker-b-1', WEB);
      expect(await page().textContent('#why-title')).toBe('Why: worker-b-1 (zone-b) → shop/web');
      const rows = await page().$$eval('#why tbody tr', (trs) =>
        trs.map((tr) => ({
          address: tr.querySelector('td .mono')?.textContent,
          sends: tr.querySelector('td:nth-child(3)')?.textContent === 'sends',
          reasons: [...tr.querySelectorAll('ul.reasons li')].map((li) => li.textContent),
          selected: tr.classList.contains('selected'),
        })),
      );
      expect(rows.map(({ selected: _s, ...r }) => r)).toEqual(expected.endpoints.map((e) => ({ address: e.address, sends: e.sends, reasons: e.reasons })));
      // At seq 18, zone-b holds web-5 and web-7: worker-b-1 sends to exactly those.
      expect(rows.filter((r) => r.sends).map((r) => r.address)).toEqual(['10.1.0.5:8080', '10.1.0.7:8080']);
      expect(rows.find((r) => r.selected)?.address).toBe('10.1.0.5:8080');
      expect(await page().textContent('#why')).toContain(expected.ports[0]?.selection ?? '(no port)');

      // The endpoint picked, as every node sees it: whyNode of each node, for that address.
      await page().waitForSelector('#endpoint-why table');
      const state = await expectedAt('latest');
      // Rows group the nodes that answer alike; spread back out, they are one answer per node.
      const grouped: { nodes: string[]; sends: boolean; reasons: (string | null)[] }[] = await page().$$eval('#endpoint-why tbody tr', (trs) =>
        trs.map((tr) => ({ nodes: (tr.getAttribute('data-nodes') ?? '').split(' '), sends: tr.querySelector('td:nth-child(3)')?.textContent === 'sends', reasons: [...tr.querySelectorAll('ul.reasons li')].map((li) => li.textContent) })),
      );
      const byNode = grouped.flatMap((r) => r.nodes.map((node) => ({ node, sends: r.sends, reasons: r.reasons }))).sort((a, b) => (a.node < b.node ? -1 : 1));
      expect(byNode).toEqual(
        state.nodes.map((n) => {
          const e = whyNode(state, n.name, WEB).endpoints.find((x) => x.address === '10.1.0.5:8080');
          return { node: n.name, sends: e?.sends ?? false, reasons: e?.reasons ?? [] };
        }),
      );
      expect(await page().textContent('#endpoint-title')).toBe('Nodes → 10.1.0.5 of shop/web: 1 of 3 send to it');
      // The zones mark which nodes send there.
      expect(await page().$$eval('#zone-list .node.sends', (ns) => ns.map((n) => n.getAttribute('data-node')))).toEqual(['worker-b-1']);
    });

    it('takes screenshots that are PNGs of the page size with a drawn chart', async () => {
      const full = await page().screenshot({ fullPage: true });
      await writeFile(join(SHOTS, 'web-view.png'), full);
      const size = pngSize(full);
      expect(size.width).toBe(WIDTH);
      expect(size.height).toBeGreaterThanOrEqual(HEIGHT);

      const chart = page().locator('#chart');
      const box = await chart.boundingBox();
      const png = await chart.screenshot();
      // The element's box in CSS pixels (scale 1), give or take the pixel its fractional edge rounds to.
      const chartSize = pngSize(png);
      expect(Math.abs(chartSize.width - (box?.width ?? 0))).toBeLessThanOrEqual(1);
      expect(Math.abs(chartSize.height - (box?.height ?? 0))).toBeLessThanOrEqual(1);
      expect(chartSize.width).toBeGreaterThan(WIDTH * 0.9);
      const ink = await countInk(page(), png, CHART_BACKGROUND);
      // 18 events over 80 buckets: a bar in about one bucket of four, plus the cursor.
      expect(ink.differing / ink.total).toBeGreaterThan(0.05);
      // And the check itself tells a blank chart: the same chart with its bars and cursor hidden.
      const hide = await page().addStyleTag({ content: '#chart > * { display: none }' });
      const blank = await countInk(page(), await chart.screenshot(), CHART_BACKGROUND);
      await hide.evaluate((tag) => (tag as unknown as { remove(): void }).remove());
      expect(blank.differing / blank.total).toBeLessThan(0.02);
    });

    it('answers bad points and unknown services with clear errors, on the page and in JSON', async () => {
      const { url } = ui as { url: string };
      const bad = await fetch(new URL('/api/state?at=yesterday', url));
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toContain('a point is a sequence number, an RFC 3339 time');
      const unknown = await fetch(new URL('/api/why?node=worker-a-1&service=shop/nope', url));
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { error: string }).error).toBe('service shop/nope is not in the log at sequence 18');
      const notThere = await fetch(new URL('/no-such-page', url));
      expect(notThere.status).toBe(404);
      expect(await notThere.text()).toContain('There is no page at /no-such-page.');

      await page().goto(new URL('/#at=yesterday', url).href);
      await page().waitForSelector('#error:not([hidden])');
      expect(await page().textContent('#error')).toContain('a point is a sequence number');
      await page().screenshot({ path: join(SHOTS, 'web-view-error.png') });
    });
  });
}
