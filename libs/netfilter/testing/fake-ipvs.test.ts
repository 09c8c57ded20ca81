import { describe, expect, it } from 'vitest';
import { FakeIpvs, NO_IPVS_MESSAGE } from './fake-ipvs.ts';

function batch(fake: FakeIpvs, text: string) {
  return fake.handle({ command: 'ipvsadm', args: ['-R'], input: text });
}

describe('FakeIpvs', () => {
  it('applies -A/-a/-E/-e/-d/-D batches and lists them as ipvsadm -L -n does', () => {
    const fake = new FakeIpvs();
    expect(batch(fake, '-A -t 10.0.0.1:80 -s rr -p 300\n-a -t 10.0.0.1:80 -r 10.1.0.1:8080 -m -w 1\n-a -t 10.0.0.1:80 -r 10.1.0.2:8080 -m -w 1\n')?.code).toBe(0);
    expect(batch(fake, '-E -t 10.0.0.1:80 -s lc\n-e -t 10.0.0.1:80 -r 10.1.0.2:8080 -m -w 0\n')?.code).toBe(0);
    fake.setConnections('TCP/10.0.0.1:80', '10.1.0.2:8080', 4, 2);
    const list = fake.handle({ command: 'ipvsadm', args: ['-L', '-n'] })?.stdout.split('\n') ?? [];
    expect(list.slice(3)).toEqual([
      'TCP  10.0.0.1:80 lc',
      '  -> 10.1.0.1:8080                Masq    1      0          0',
      '  -> 10.1.0.2:8080                Masq    0      4          2',
      '',
    ]);
    expect(batch(fake, '-d -t 10.0.0.1:80 -r 10.1.0.2:8080\n-D -t 10.0.0.1:80\n')?.code).toBe(0);
    expect(fake.dump()).toEqual([]);
  });

  const failures: { name: string; text: string; line: number; left: string[] }[] = [
    { name: 'adding a service twice fails at that line, earlier lines stay applied', text: '-A -u 10.0.0.2:53 -s rr\n-A -u 10.0.0.2:53 -s rr\n', line: 2, left: ['UDP/10.0.0.2:53 rr'] },
    { name: 'a real server for an unknown service fails', text: '-a -t 10.0.0.3:80 -r 10.1.0.1:80 -m -w 1\n', line: 1, left: [] },
    { name: 'deleting an unknown real server fails', text: '-A -t 10.0.0.3:80 -s rr\n-d -t 10.0.0.3:80 -r 10.1.0.1:80\n', line: 2, left: ['TCP/10.0.0.3:80 rr'] },
  ];
  for (const tc of failures) {
    it(tc.name, () => {
      const fake = new FakeIpvs();
      const r = batch(fake, tc.text);
      expect(r?.code).toBe(1);
      expect(r?.stderr).toMatch(new RegExp(`^ipvsadm: line ${tc.line}: `));
      expect(fake.dump()).toEqual(tc.left);
    });
  }

  it('plays a kernel without IPVS', () => {
    const r = new FakeIpvs({ available: false }).handle({ command: 'ipvsadm', args: ['-L', '-n'] });
    expect([r?.code, r?.stderr]).toEqual([2, NO_IPVS_MESSAGE]);
  });
});
