// The whole IPVS-mode node plan as one deterministic text (D.5.4): what `slicemesh proxy-plan
// --format ipvs` prints and the dry-run backend writes.

import type { DpState } from '../model.ts';
import type { IptablesChainNames } from '../iptables/chain-names.ts';
import { OWN_CHAINS } from '../iptables/chain-names.ts';
import { renderIpvsCompanion } from './companion.ts';
import type { IpvsScheduler } from './desired.ts';
import { ipvsSysctls, renderIpvs } from './desired.ts';

export interface IpvsNodePlanOptions {
  /** iptables chain names, which also name the sets; default our own. */
  readonly chains?: IptablesChainNames;
  /** Dummy interface; default `kube-ipvs0`. */
  readonly interface?: string;
  /** Default `rr`. */
  readonly scheduler?: IpvsScheduler;
}

/**
 * Everything an IPVS-mode node applies: the kernel settings and the dummy interface, then per
 * family in the order the agent applies it: the companion ipsets (`ipset restore -exist`), the
 * iptables rules using them (`iptables-restore --noflush`, ip6tables for IPv6), the service
 * addresses bound to the dummy interface, and the virtual and real servers
 * (`ipvsadm-restore`). Section headers are `#` comments.
 */
export function renderIpvsNodePlan(states: readonly DpState[], opts: IpvsNodePlanOptions = {}): string {
  const dev = opts.interface ?? 'kube-ipvs0';
  const sysctls = [...new Map(states.flatMap((s) => ipvsSysctls(s.family)).map((s) => [s.key, s])).values()];
  const out: string[] = ['# IPVS mode: kernel settings', ...sysctls.map((s) => `sysctl -w ${s.key}=${s.value}`), `# IPVS mode: dummy interface ${dev}`, `ip link add ${dev} type dummy`];
  for (const state of states) {
    const ipvs = renderIpvs(state, { interface: dev, ...(opts.scheduler ? { scheduler: opts.scheduler } : {}) });
    const companion = renderIpvsCompanion(state, opts.chains ?? OWN_CHAINS);
    const tool = state.family === 'IPv6' ? 'ip6tables-restore' : 'iptables-restore';
    out.push(
      `# ${state.family}: ipset restore -exist`,
      companion.ipsetRestore.trimEnd(),
      `# ${state.family}: ${tool} --noflush`,
      companion.iptablesRestore.trimEnd(),
      `# ${state.family}: service addresses on ${dev}`,
      ...ipvs.iproute,
      `# ${state.family}: ipvsadm-restore`,
    );
    if (ipvs.ipvsadmRestore !== '') out.push(ipvs.ipvsadmRestore.trimEnd());
  }
  return `${out.join('\n')}\n`;
}
