// Pod addresses: each node gets the next block of the pod CIDR (in the order nodes are first
// seen), and pods get the next free host address of their node's block, wrapping around, so
// an address is not reused right after its pod goes away (like host-local IPAM).
import { cidrText, intToIpv4, ipv4ToInt, parseCidr4, subnet } from '../ipv4.ts';
import type { Cidr4 } from '../ipv4.ts';

interface NodePool {
  readonly cidr: Cidr4;
  readonly used: Set<number>;
  cursor: number;
}

export class PodIPAM {
  readonly nodePrefix: number;
  readonly #parent: Cidr4;
  readonly #pools = new Map<string, NodePool>();
  #next = 0;

  constructor(podCIDR: string, nodePrefix: number) {
    this.nodePrefix = nodePrefix;
    const parent = parseCidr4(podCIDR);
    if (!parent || nodePrefix < parent.prefix || nodePrefix > 30) throw new Error(`invalid pod CIDR ${podCIDR} for /${nodePrefix} node blocks`);
    this.#parent = parent;
  }

  #pool(node: string): NodePool {
    let pool = this.#pools.get(node);
    if (!pool) {
      const cidr = subnet(this.#parent, this.nodePrefix, this.#next);
      if (!cidr) throw new Error(`pod CIDR ${cidrText(this.#parent)} has no /${this.nodePrefix} left for node ${node}`);
      this.#next++;
      pool = { cidr, used: new Set(), cursor: 2 };
      this.#pools.set(node, pool);
    }
    return pool;
  }

  /** The node's pod CIDR, assigning the next free block on first use. */
  cidrFor(node: string): string {
    return cidrText(this.#pool(node).cidr);
  }

  /** The next free pod IP on `node`, or undefined when its block is exhausted. */
  allocate(node: string): string | undefined {
    const pool = this.#pool(node);
    // Host offsets 2 .. size-2: skip the network address, the gateway (.1) and broadcast.
    const first = 2;
    const last = pool.cidr.size - 2;
    const span = last - first + 1;
    for (let i = 0; i < span; i++) {
      const offset = first + ((pool.cursor - first + i) % span);
      if (!pool.used.has(offset)) {
        pool.used.add(offset);
        pool.cursor = offset + 1 > last ? first : offset + 1;
        return intToIpv4(pool.cidr.base + offset);
      }
    }
    return undefined;
  }

  /** Marks an address in use (a pod that already has it). */
  claim(node: string, ip: string): void {
    const pool = this.#pool(node);
    const n = ipv4ToInt(ip);
    if (n !== undefined && n >= pool.cidr.base && n < pool.cidr.base + pool.cidr.size) pool.used.add(n - pool.cidr.base);
  }

  release(node: string, ip: string): void {
    const pool = this.#pools.get(node);
    const n = ipv4ToInt(ip);
    if (pool && n !== undefined) pool.used.delete(n - pool.cidr.base);
  }
}
