import { describe, expect, it } from 'vitest';
import { StatementNamer, statementName } from './prepared-statements.ts';

describe('StatementNamer', () => {
  const cases: { name: string; text: string; runs: number; named: boolean[] }[] = [
    { name: 'a CTE write is named from its third run on', text: 'with f as (select 1) insert into t select * from f', runs: 4, named: [false, false, true, true] },
    { name: 'an insert is named', text: 'insert into t (a) values ($1)', runs: 3, named: [false, false, true] },
    { name: 'an update is named, whatever the case and leading space', text: '\n  UPDATE t set a = $1', runs: 3, named: [false, false, true] },
    { name: 'a delete is named', text: 'delete from t where a = $1', runs: 3, named: [false, false, true] },
    { name: 'a select never is: a migration could change what it returns', text: 'select * from t where a = $1', runs: 5, named: [false, false, false, false, false] },
    { name: 'a word that only starts like one is not a write', text: 'withdraw()', runs: 3, named: [false, false, false] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const namer = new StatementNamer();
      const got = Array.from({ length: tc.runs }, () => namer.nameOf(tc.text) !== undefined);
      expect(got).toEqual(tc.named);
    });
  }

  it('the name is the same on every connection and fits Postgres identifiers', () => {
    const text = 'insert into t (a) values ($1)';
    const a = new StatementNamer({ after: 1 });
    const b = new StatementNamer({ after: 1 });
    expect(a.nameOf(text)).toBe(b.nameOf(text));
    expect(a.nameOf(text)).toBe(statementName(text));
    expect(Buffer.byteLength(statementName(text))).toBeLessThanOrEqual(63);
    expect(statementName(text)).not.toBe(statementName(`${text} `));
  });

  it('names at most `max` texts per connection; the rest run unnamed', () => {
    const namer = new StatementNamer({ after: 1, max: 2 });
    const names = ['insert into a values (1)', 'insert into b values (1)', 'insert into c values (1)'].map((t) => namer.nameOf(t));
    expect(names.map((n) => n !== undefined)).toEqual([true, true, false]);
    expect(namer.nameOf('insert into a values (1)')).toBe(names[0]);
  });
});
