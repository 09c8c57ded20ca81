import { describe, expect, it } from 'vitest';
import { sumMetric } from './probe.ts';

const TEXT = [
  '# HELP slicemesh_watcher_events_published_total Changes stored in KUBE.',
  '# TYPE slicemesh_watcher_events_published_total counter',
  'slicemesh_watcher_events_published_total{kind="Pod",op="upsert",component="watcher"} 40',
  'slicemesh_watcher_events_published_total{kind="Node",op="upsert",component="watcher"} 9',
  'slicemesh_watcher_events_published_total_extra 1000',
  'slicemesh_ready 1',
].join('\n');

describe('sumMetric', () => {
  const cases = [
    { name: 'sums every labelled series of the metric', metric: 'slicemesh_watcher_events_published_total', want: 49 },
    { name: 'a metric without labels', metric: 'slicemesh_ready', want: 1 },
    { name: 'another metric sharing the name as a prefix is not counted', metric: 'slicemesh_watcher_events_published', want: null },
    { name: 'an absent metric is null, not 0', metric: 'slicemesh_nothing', want: null },
  ];
  for (const tc of cases) it(tc.name, () => expect(sumMetric(TEXT, tc.metric)).toBe(tc.want));
  it('empty text: null', () => expect(sumMetric('', 'x')).toBeNull());
});
