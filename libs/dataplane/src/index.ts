// @slicemesh/dataplane: pure renderers of kube-proxy-equivalent rules. Text in, text out;
// applying the output is the netfilter adapter's job. Packet tracers for tests live in
// '@slicemesh/dataplane/testing'.
export * from './model.ts';
export { portPolicy, cascadeProbability, cidrContains } from './policy.ts';
export type { PortPolicy, NoEndpointVerdict } from './policy.ts';
export * from './iptables/chain-names.ts';
export { renderIptablesJumps } from './iptables/top-level.ts';
export type { IptablesJump } from './iptables/top-level.ts';
export * from './iptables/render.ts';
export { narrowToKernel, ruleWords, sameAsSaved, savedForm } from './iptables/saved-form.ts';
export type { IptablesKernelChains, NarrowedScript } from './iptables/saved-form.ts';
export * from './nftables/names.ts';
export { nftDesired } from './nftables/desired.ts';
export type { NftDesired } from './nftables/desired.ts';
export * from './nftables/render.ts';
export * from './ipvs/desired.ts';
export * from './ipvs/diff.ts';
export * from './ipvs/companion.ts';
export * from './ipvs/plan.ts';
export * from './from-proxy-model.ts';
export * from './userspace.ts';
