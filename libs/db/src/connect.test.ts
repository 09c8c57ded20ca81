import { describe, expect, it } from 'vitest';
import { describeConnectFailure, redactUrl } from './connect.ts';

describe('connection messages', () => {
  const cases = [
    { name: 'masks the password', url: 'postgres://u:pw@h:5432/db', want: 'postgres://u:***@h:5432/db' },
    { name: 'leaves a password-less URL alone', url: 'postgres://postgres@127.0.0.1:5432/postgres', want: 'postgres://postgres@127.0.0.1:5432/postgres' },
    { name: 'masks even when the URL does not parse', url: 'postgres://u:p w@[bad/db', want: 'postgres://u:***@[bad/db' },
  ];
  for (const tc of cases) it(`redactUrl ${tc.name}`, () => expect(redactUrl(tc.url)).toBe(tc.want));

  it('describeConnectFailure falls back to the error code when the message is empty (AggregateError on localhost)', () => {
    const err = Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
    expect(describeConnectFailure('postgres://localhost/x', err)).toMatch(/^Postgres not reachable at postgres:\/\/localhost\/x: ECONNREFUSED — start it with: /);
  });
});
