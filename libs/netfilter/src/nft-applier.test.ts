import { renderNftablesFull, renderNftablesUpdate } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { FakeNft, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import { NftApplier } from './nft-applier.ts';

const v1 = deepFreeze(dpState([svc('ns1/web:http', { endpoints: [ep('10.180.0.1')] })]));
const v2 = deepFreeze(dpState([svc('ns1/web:http', { endpoints: [ep('10.180.0.1'), ep('10.180.0.2')] })]));

function setup() {
  const fake = new FakeNft();
  const rec = new RecordingExec([fake]);
  return { fake, rec, nft: new NftApplier({ exec: rec.exec }) };
}

describe('NftApplier.apply', () => {
  it('D.6.9 feeds the script to nft -f - as one transaction', async () => {
    const { fake, rec, nft } = setup();
    await nft.apply(renderNftablesFull(v1));
    await nft.apply(renderNftablesUpdate(v1, v2).script);
    expect(rec.commandLines()).toEqual(['nft -f -', 'nft -f -']);
    expect(fake.ruleset.has('ip slicemesh')).toBe(true);
    expect(fake.scripts).toHaveLength(2);
  });

  it('an empty script (nothing changed) runs nothing', async () => {
    const { rec, nft } = setup();
    await nft.apply(renderNftablesUpdate(v1, v1).script);
    expect(rec.calls).toEqual([]);
  });

  it('a failing transaction throws ApplyError quoting the failing line, and changes nothing', async () => {
    const { fake, nft } = setup();
    const script = ['add table ip t', 'add chain ip t a', 'add chain ip t b', 'add rule ip t a jump missing', 'add chain ip t c'].join('\n');
    const e = (await nft.apply(script).catch((x: unknown) => x)) as ApplyError;
    expect(e).toBeInstanceOf(ApplyError);
    expect([e.tool, e.line]).toEqual(['nft', 4]);
    expect(e.excerpt.map((l) => l.n)).toEqual([1, 2, 3, 4, 5]);
    expect(fake.ruleset.size).toBe(0);
  });
});

describe('NftApplier.deleteTable', () => {
  const cases: { name: string; before: string | null }[] = [
    { name: 'deletes an existing table', before: renderNftablesFull(v1) },
    { name: 'is not an error when the table is absent', before: null },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { fake, nft } = setup();
      if (tc.before !== null) await nft.apply(tc.before);
      await nft.deleteTable('ip', 'slicemesh');
      expect(fake.ruleset.has('ip slicemesh')).toBe(false);
    });
  }
});
