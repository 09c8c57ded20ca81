import { describe, expect, it } from 'vitest';
import { truncateUtf8 } from './publish.ts';

describe('truncateUtf8', () => {
  const cases = [
    { name: 'the empty string is kept, 0 bytes', text: '', max: 4, want: { text: '', bytes: 0, truncated: false } },
    { name: 'text at the limit is kept whole', text: 'abcd', max: 4, want: { text: 'abcd', bytes: 4, truncated: false } },
    { name: 'ASCII over the limit is cut at the limit', text: 'abcdef', max: 4, want: { text: 'abcd', bytes: 6, truncated: true } },
    { name: 'a two-byte character straddling the limit is dropped whole', text: 'abcé', max: 4, want: { text: 'abc', bytes: 5, truncated: true } },
    { name: 'a four-byte character is never split', text: 'a😀b', max: 4, want: { text: 'a', bytes: 6, truncated: true } },
    { name: 'a limit of 0 keeps nothing', text: 'x', max: 0, want: { text: '', bytes: 1, truncated: true } },
  ];
  for (const tc of cases) it(tc.name, () => expect(truncateUtf8(tc.text, tc.max)).toEqual(tc.want));
});
