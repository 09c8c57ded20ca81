import { describe, expect, it } from 'vitest';
import { builtRootOf } from './layout.ts';

describe('builtRootOf', () => {
  const cases: { name: string; url: string; root: string | undefined }[] = [
    { name: 'a bundle in dist/ is built', url: 'file:///app/dist/stack.js', root: '/app' },
    { name: 'a shared chunk is built, rooted above dist/', url: 'file:///app/dist/chunks/chunk-AB12.js', root: '/app' },
    { name: 'a TypeScript source is not built', url: 'file:///repo/services/stack/src/child-process.ts', root: undefined },
    { name: 'a source under a directory named dist is still a source', url: 'file:///home/dist/repo/libs/runtime/src/layout.ts', root: undefined },
    { name: 'the innermost dist/ wins', url: 'file:///srv/dist/slicemesh/dist/watcher.js', root: '/srv/dist/slicemesh' },
  ];
  for (const c of cases) it(c.name, () => expect(builtRootOf(c.url)).toBe(c.root));
});
