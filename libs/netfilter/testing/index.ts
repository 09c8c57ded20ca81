// Fakes of the kernel tools for unit tests of code that takes an `Exec`. Each fake has its
// own tests beside it; the int tests check the important ones against the real tools.
export * from './recording-exec.ts';
export * from './fake-iptables.ts';
export * from './fake-nft.ts';
export * from './fake-ipvs.ts';
export * from './fake-ip-link.ts';
export * from './fake-conntrack.ts';
export * from './fake-ipset.ts';
export * from './fake-sysctl.ts';
