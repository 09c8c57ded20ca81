// The proxy agent as the service host runs it (main.ts and the stack's in-process mode).

import type { ServiceDefinition } from '@slicemesh/runtime';
import type { ProxyAgentConfig } from './config.ts';
import { parseProxyAgentConfig, proxyAgentConfig } from './config.ts';
import { startProxyAgent } from './proxy-agent.ts';

export const proxyAgentService: ServiceDefinition<ProxyAgentConfig> = {
  name: 'proxy-agent',
  summary: 'Programs one node\'s service rules from its zone\'s endpoint views.',
  config: { parse: parseProxyAgentConfig, usage: () => proxyAgentConfig.usage() },
  common: (c) => c,
  start: (config, deps) => {
    const a = startProxyAgent(config, { log: deps.logger, metrics: deps.metrics });
    return {
      ready: a.ready,
      // /healthz is kube-proxy's proxier health (D.9.3): 503 once a change waits too long.
      live: () => a.healthy(),
      // Not ready: why, and the zone (a Node that KUBE does not hold yet is said here).
      readiness: () => (a.isReady() ? { ready: true } : { ready: false, reason: `${a.lastSync?.error ?? 'waiting for the initial state and the first sync'}; ${a.zone().description}` }),
      close: () => a.close(),
    };
  },
};
