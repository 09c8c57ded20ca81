// When the web view's browser test may skip: only without chromium and outside CI.
import { describe, expect, it } from 'vitest';
import { chromiumMissing, pngSize } from './chromium.ts';

describe('chromiumMissing', () => {
  const cases = [
    { name: 'present: runs', env: {}, path: process.execPath, skip: false },
    { name: 'absent outside CI: skips, saying why', env: {}, path: '/nonexistent/chromium', skip: true },
    { name: 'absent in CI: runs, so the launch fails', env: { CI: 'true' }, path: '/nonexistent/chromium', skip: false },
    { name: 'CI set but empty counts as not CI', env: { CI: '' }, path: '/nonexistent/chromium', skip: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const why = chromiumMissing(c.env, c.path);
      expect(why !== undefined).toBe(c.skip);
      if (c.skip) expect(why).toBe("/nonexistent/chromium is absent (apt-get install chromium); the web view's browser test is skipped");
    });
  }
});

describe('pngSize', () => {
  it('reads width and height from the IHDR chunk', () => {
    const header = Buffer.from('89504e470d0a1a0a0000000d49484452000005000000032000', 'hex');
    expect(pngSize(header)).toEqual({ width: 1280, height: 800 });
  });
  it('refuses what is not a PNG', () => expect(() => pngSize(Buffer.from('GIF89a-not-a-png-at-all'))).toThrow(/not a PNG/));
});
