// @slicemesh/netfilter: the only package that runs iptables-restore, iptables, nft, ipvsadm
// and ip. Every adapter takes an injected `Exec` (spawnExec in production, a recording fake
// from '@slicemesh/netfilter/testing' in tests) and reports failures as ApplyError.
export * from './exec.ts';
export * from './apply-error.ts';
export * from './iptables-restorer.ts';
export * from './nft-applier.ts';
export * from './ip-link.ts';
export * from './ipvs-client.ts';
export * from './ipset-restorer.ts';
export * from './sysctl.ts';
export * from './listen.ts';
export * from './conntrack.ts';
export * from './userspace-proxy.ts';
export * from './userspace-netns.ts';
