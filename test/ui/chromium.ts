// Debian's chromium driven by playwright-core, for the web view's browser test, and the checks
// the test makes of its screenshots. The browser runs headless with a fresh profile and no
// network services of its own, so a run touches nothing but the page under test.
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Why the browser test cannot run here, or undefined when it can. Only a machine without
 * chromium outside CI is excused; in CI (.ci/run installs it) a missing browser is a failure.
 */
export function chromiumMissing(env: NodeJS.ProcessEnv = process.env, path: string = CHROMIUM): string | undefined {
  if (existsSync(path)) return undefined;
  if (env['CI'] !== undefined && env['CI'] !== '') return undefined; // let the launch fail loudly
  return `${path} is absent (apt-get install chromium); the web view's browser test is skipped`;
}

export interface Browser {
  readonly page: Page;
  close(): Promise<void>;
}

/** Launches chromium with a fresh profile directory and opens one page of `width`×`height`. */
export async function launchBrowser(width = 1280, height = 800): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'slicemesh-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width, height } });
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    page,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Width and height from a PNG's IHDR chunk; throws when `png` is not a PNG. */
export function pngSize(png: Buffer): { width: number; height: number } {
  const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (png.length < 24 || !png.subarray(0, 8).equals(SIGNATURE) || png.toString('latin1', 12, 16) !== 'IHDR') throw new Error(`not a PNG (${png.length} bytes)`);
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

export interface PixelCount {
  readonly total: number;
  /** Pixels farther than the tolerance from `background`. */
  readonly differing: number;
}

/**
 * Decodes `png` in the page (an <img> drawn on a canvas) and counts the pixels that differ from
 * `background` ([r, g, b]) by more than `tolerance` in any channel: a blank chart counts ~0.
 */
// Runs in the page, so it is text: the project's TypeScript has no DOM types.
const COUNT_INK = `async ({ b64, bg, tol }) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + b64;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  let differing = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (Math.abs(data[i] - bg[0]) > tol || Math.abs(data[i + 1] - bg[1]) > tol || Math.abs(data[i + 2] - bg[2]) > tol) differing++;
  }
  return { total: data.length / 4, differing };
}`;

export async function countInk(page: Page, png: Buffer, background: readonly [number, number, number], tolerance = 24): Promise<PixelCount> {
  const fn = `(${COUNT_INK})(${JSON.stringify({ b64: png.toString('base64'), bg: background, tol: tolerance })})`;
  return (await page.evaluate(fn)) as PixelCount;
}
