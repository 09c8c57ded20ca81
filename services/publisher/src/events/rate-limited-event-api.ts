// Event writes through a token bucket set like kube-controller-manager's --kube-api-qps and
// --kube-api-burst (the same settings as the slice writes), so a storm of events cannot
// exceed the client-side limit the cluster operator chose.

import type { CoreEventApi } from '@slicemesh/kube';
import type { Clock } from '@slicemesh/runtime';
import { TokenBucket } from '@slicemesh/runtime';
import { sleepOn } from '../apply.ts';

export interface EventRateLimit {
  readonly qps: number;
  readonly burst: number;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Called with each wait the limit imposed, ms (> 0 only). */
  readonly onWait?: (ms: number) => void;
}

export function rateLimitedEventApi(api: CoreEventApi, opts: EventRateLimit): CoreEventApi {
  const bucket = new TokenBucket({ everyMs: 1000 / opts.qps, burst: opts.burst, clock: opts.clock });
  const gate = async (): Promise<void> => {
    const ms = bucket.reserve();
    if (ms <= 0) return;
    opts.onWait?.(ms);
    await sleepOn(opts.clock, ms, opts.signal);
  };
  return {
    async create(namespace, event) {
      await gate();
      return api.create(namespace, event);
    },
    async patch(namespace, name, patch) {
      await gate();
      return api.patch(namespace, name, patch);
    },
  };
}
