// proxy-agent settings: every default in one place (habit 14). `parseProxyAgentConfig` adds the
// checks that involve more than one setting.

import { NATS_CONNECTION_SETTINGS, NATS_URL_SETTING } from '@slicemesh/nats';
import { IPTABLES_CHAIN_MODES, defaultMasqueradeBit } from '@slicemesh/dataplane';
import type { ConfigOf } from '@slicemesh/runtime';
import { ConfigError, defineConfig, LOG_LEVEL_SETTING } from '@slicemesh/runtime';
import { canonicalIP } from '@slicemesh/model';
import { parseCIDR } from '@slicemesh/proxy-state';

export const BACKENDS = ['iptables', 'nftables', 'ipvs', 'userspace', 'dry-run'] as const;
export type BackendKind = (typeof BACKENDS)[number];
export const DRY_RUN_FORMATS = ['iptables', 'nftables', 'ipvs'] as const;
export const IPVS_SCHEDULERS = ['rr', 'lc', 'dh', 'sh', 'sed', 'nq'] as const;

function parseCidrSetting(text: string): string {
  const c = parseCIDR(text);
  if (c === null) throw new Error('not a CIDR (e.g. 10.244.0.0/16)');
  return c.cidr;
}

function parseIPList(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const ip = canonicalIP(part);
    if (ip === null) throw new Error(`${JSON.stringify(part)} is not an IP address`);
    out.push(ip);
  }
  return out;
}

export const proxyAgentConfig = defineConfig({
  natsUrl: NATS_URL_SETTING,
  ...NATS_CONNECTION_SETTINGS,
  cluster: { env: 'CLUSTER', flag: '--cluster', default: 'local', parse: 'string', doc: 'Cluster name, the first token of every key the agent watches.' },
  nodeName: { env: 'NODE_NAME', flag: '--node-name', parse: 'string', doc: 'This node: endpoints on it are local (traffic policies Local).' },
  nodeZone: {
    env: 'NODE_ZONE',
    flag: '--node-zone',
    default: '',
    parse: 'string',
    doc: "Overrides the zone: this view is read whatever the Node's labels say. Empty: the zone is the topology.kubernetes.io/zone label of this node's Node in KUBE, followed as it changes (no label: the unfiltered view).",
  },
  kubeStream: {
    env: 'KUBE_STREAM',
    flag: '--kube-stream',
    default: 'KUBE',
    parse: (text: string) => {
      if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Error('must be [A-Za-z0-9_-]+');
      return text;
    },
    doc: 'Stream of Kubernetes objects: this node\'s Node is read from it (unless NODE_ZONE is set).',
  },
  subjectPrefix: {
    env: 'SUBJECT_PREFIX',
    flag: '--subject-prefix',
    default: '',
    parse: (text: string) => {
      if (!/^(?:[A-Za-z0-9_-]+\.)*$/.test(text)) throw new Error('must be empty or dot-terminated tokens, e.g. "t1."');
      return text;
    },
    doc: 'Prefix of every stream subject ("" in production; tests isolate with it).',
  },
  backend: { env: 'BACKEND', flag: '--backend', default: 'iptables', parse: 'string', choices: BACKENDS, doc: 'What programs the rules. userspace: a proxy socket per service port (TCP, UDP) that iptables REDIRECTs the virtual IPs to; round-robin, the next endpoint tried when a connect fails, ClientIP affinity.' },
  dryRunFile: { env: 'DRY_RUN_FILE', flag: '--dry-run-file', default: 'slicemesh-proxy-rules.txt', parse: 'string', doc: 'dry-run: the file rewritten with the complete ruleset after every sync.' },
  dryRunFormat: { env: 'DRY_RUN_FORMAT', flag: '--dry-run-format', default: 'iptables', parse: 'string', choices: DRY_RUN_FORMATS, doc: 'dry-run: which backend\'s rules to write.' },
  stateDir: {
    env: 'STATE_DIR',
    flag: '--state-dir',
    default: '/run/slicemesh',
    parse: 'string',
    doc: 'nftables: where the applied state is kept, so a restarted agent keeps the rules already in the kernel (a tmpfs like /run forgets it when the kernel forgets the rules). Empty: every start is a full sync.',
  },
  netns: { env: 'NETNS', flag: '--netns', parse: 'string', optional: true, doc: 'Program the rules inside this network namespace (ip netns exec); unset: the agent\'s own.' },
  minSyncPeriod: { env: 'MIN_SYNC_PERIOD', flag: '--min-sync-period', default: '1s', parse: 'duration', min: 0, doc: 'Minimum time between syncs (bursts of 2 allowed).' },
  syncPeriod: { env: 'SYNC_PERIOD', flag: '--sync-period', default: '30s', parse: 'duration', min: 1, doc: 'Maximum time between syncs, and the retry delay after a failed one.' },
  fullSyncPeriod: { env: 'FULL_SYNC_PERIOD', flag: '--full-sync-period', default: '1h', parse: 'duration', min: 1, doc: 'A sync rewrites every rule at least this often.' },
  ipvsScheduler: { env: 'IPVS_SCHEDULER', flag: '--ipvs-scheduler', default: 'rr', parse: 'string', choices: IPVS_SCHEDULERS, doc: 'IPVS scheduler for every virtual server.' },
  ipvsInterface: { env: 'IPVS_INTERFACE', flag: '--ipvs-interface', default: 'kube-ipvs0', parse: 'string', doc: 'IPVS: dummy interface holding the service IPs.' },
  podCIDR: { env: 'POD_CIDR', flag: '--pod-cidr', parse: parseCidrSetting, optional: true, doc: 'Sources inside are pods (others are masqueraded to ClusterIPs); unset: no local-traffic detector.' },
  masqueradeAll: { env: 'MASQUERADE_ALL', flag: '--masquerade-all', default: false, parse: 'bool', doc: 'SNAT every connection to a ClusterIP.' },
  masqueradeBit: {
    env: 'MASQUERADE_BIT',
    flag: '--masquerade-bit',
    parse: 'int',
    min: 0,
    max: 31,
    optional: true,
    doc: "Packet-mark bit that requests SNAT (every backend); unset: 13 (0x2000, clear of kube-proxy's 0x4000 and 0x8000), or kube-proxy's 14 (0x4000) with --iptables-chains kube-proxy.",
  },
  iptablesChains: {
    env: 'IPTABLES_CHAINS',
    flag: '--iptables-chains',
    default: 'own',
    parse: 'string',
    choices: IPTABLES_CHAIN_MODES,
    doc: "iptables chain names. own: SLICEMESH-SERVICES, SLICEMESH-SVC-<hash>, …, so the agent runs beside kube-proxy; kube-proxy: kube-proxy's own KUBE-* names (and its mark), to replace kube-proxy in place.",
  },
  nodeIPs: { env: 'NODE_IPS', flag: '--node-ips', default: '', parse: parseIPList, doc: 'Comma-separated addresses accepting NodePorts (the first is the node IP); empty: every local address.' },
  ipFamily: { env: 'IP_FAMILY', flag: '--ip-family', default: 'IPv4', parse: 'string', choices: ['IPv4', 'IPv6'], doc: 'The family this agent programs.' },
  dualStack: {
    env: 'DUAL_STACK',
    flag: '--dual-stack',
    default: false,
    parse: 'bool',
    doc: 'Program the other family too, in the same sync (iptables: iptables-restore and ip6tables-restore; nftables: the tables ip and ip6): each family from the Service\'s ClusterIP of that family and the EndpointSlices of that addressType. NODE_IPS may then hold both families; POD_CIDR applies to its own family only. iptables, nftables and ipvs backends (ipvs: one IPVS table and dummy interface, each family keeping to its own addresses).',
  },
  svcBucket: { env: 'SVC_BUCKET', flag: '--svc-bucket', default: 'svc', parse: 'string', doc: 'KV bucket of service specs.' },
  viewsBucket: { env: 'VIEWS_BUCKET', flag: '--views-bucket', default: 'views', parse: 'string', doc: 'KV bucket of per-zone endpoint views.' },
  healthzTimeout: {
    env: 'HEALTHZ_TIMEOUT',
    flag: '--healthz-timeout',
    parse: 'duration',
    optional: true,
    min: 1,
    doc: '/healthz answers 503 once a change has waited this long for a successful sync (kube-proxy\'s healthz); unset: twice --sync-period.',
  },
  healthCheckServers: {
    env: 'HEALTH_CHECK_SERVERS',
    flag: '--health-check-servers',
    default: 'auto',
    parse: 'string',
    choices: ['auto', 'on', 'off'],
    doc: 'Serve the health-check node port of every LoadBalancer Service with externalTrafficPolicy Local (on the node IPs, in NETNS when set); auto: on except with the dry-run backend.',
  },
  conntrackCleanup: {
    env: 'CONNTRACK_CLEANUP',
    flag: '--conntrack-cleanup',
    default: true,
    parse: 'bool',
    doc: 'After endpoint changes, delete stale UDP conntrack entries (`conntrack -D` in the node\'s namespace); the dry-run backend only appends the commands to <dry-run-file>.conntrack.',
  },
  healthPort: { env: 'HEALTH_PORT', flag: '--health-port', default: 10256, parse: 'int', min: 0, max: 65535, doc: 'Port of /healthz, /readyz and /metrics (0: any free port).' },
  logLevel: LOG_LEVEL_SETTING,
});

/** The families the agent programs: IP_FAMILY first, then the other one with DUAL_STACK. */
export function ipFamiliesOf(c: Pick<ProxyAgentConfig, 'ipFamily' | 'dualStack'>): readonly ('IPv4' | 'IPv6')[] {
  if (!c.dualStack) return [c.ipFamily];
  return c.ipFamily === 'IPv6' ? ['IPv6', 'IPv4'] : ['IPv4', 'IPv6'];
}

/** The settings, with the masquerade bit resolved from the chain mode when unset. */
export type ProxyAgentConfig = Omit<ConfigOf<typeof proxyAgentConfig.spec>, 'masqueradeBit'> & { readonly masqueradeBit: number };

/** Parses flags and env, then checks what spans settings (node IPs and pod CIDR of the agent's family) and fills in the mark bit. */
export function parseProxyAgentConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ProxyAgentConfig {
  const c = proxyAgentConfig.parse(argv, env);
  if (c.nodeName.trim() === '') throw new ConfigError('--node-name', 'must not be empty');
  if (c.dualStack && c.backend !== 'iptables' && c.backend !== 'nftables' && c.backend !== 'ipvs') throw new ConfigError('--dual-stack', `needs --backend iptables, nftables or ipvs, not ${c.backend}`);
  const v6 = c.ipFamily === 'IPv6';
  const wrong = c.dualStack ? undefined : c.nodeIPs.find((ip) => ip.includes(':') !== v6);
  if (wrong !== undefined) throw new ConfigError('--node-ips', `${wrong} is not an ${c.ipFamily} address`);
  if (!c.dualStack && c.podCIDR !== undefined && c.podCIDR.includes(':') !== v6) throw new ConfigError('--pod-cidr', `${c.podCIDR} is not an ${c.ipFamily} range`);
  if (c.minSyncPeriod > c.syncPeriod) throw new ConfigError('--min-sync-period', 'must not exceed --sync-period');
  return Object.freeze({ ...c, masqueradeBit: c.masqueradeBit ?? defaultMasqueradeBit(c.iptablesChains) });
}
