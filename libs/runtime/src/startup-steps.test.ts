import { describe, expect, it } from 'vitest';
import { StartupSteps } from './startup-steps.ts';

describe('StartupSteps', () => {
  it('times each finished step, in the order entered, and names the one under way', () => {
    let t = 1000;
    const steps = new StartupSteps('starting', () => t);
    t += 5;
    steps.next('loading');
    t += 120.4;
    steps.next('consuming');
    expect(steps.current).toBe('consuming');
    t += 30;
    steps.next('ready');
    expect(steps.durations()).toEqual({ starting: 5, loading: 120, consuming: 30 });
    expect(Object.keys(steps.durations())).toEqual(['starting', 'loading', 'consuming']);
  });

  it('a step entered twice adds up', () => {
    let t = 0;
    const steps = new StartupSteps('a', () => t);
    t = 10;
    steps.next('b');
    t = 15;
    steps.next('a');
    t = 18;
    steps.next('done');
    expect(steps.durations()).toEqual({ a: 13, b: 5 });
  });
});
