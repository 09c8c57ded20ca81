// Test helpers for rules rendered by @slicemesh/dataplane: kernel simulators that apply the
// rendered text and packet tracers that walk it. Never used by production code.
export * from './trace-result.ts';
export * from './iptables-restore-sim.ts';
export { traceIptables } from './trace-iptables.ts';
export * from './nft-sim.ts';
export { traceNftables } from './trace-nftables.ts';
export * from './builders.ts';
