// Event writes through a token bucket set like kube-controller-manager's --kube-api-qps and
// --kube-api-burst (the same settings as the slice writes), so a storm of events cannot
// exceed the client-side limit the cluster operator chose.

import type { CoreEventApi } from '@slicemesh/kube';
import type { RateLimitOptions } from '../apply.ts';
import { rateGate } from '../apply.ts';

export type EventRateLimit = RateLimitOptions;

export function rateLimitedEventApi(api: CoreEventApi, opts: EventRateLimit): CoreEventApi {
  const gate = rateGate(opts);
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
