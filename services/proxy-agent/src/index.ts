// @slicemesh/proxy-agent: kube-proxy's job on one node, from the service specs and the
// node's zone view. `startProxyAgent` runs it in-process; src/main.ts is the executable.
export * from './config.ts';
export * from './backend.ts';
export * from './dp-model.ts';
export * from './view-state.ts';
export * from './sync.ts';
export * from './agent.ts';
export * from './metrics.ts';
export * from './proxy-agent.ts';
export { createBackend } from './backends/create-backend.ts';
export { IptablesBackend } from './backends/iptables-backend.ts';
export { NftablesBackend, nftObjectCounts } from './backends/nftables-backend.ts';
export { IpvsBackend } from './backends/ipvs-backend.ts';
export { DryRunBackend } from './backends/dry-run-backend.ts';
export * from './service.ts';
