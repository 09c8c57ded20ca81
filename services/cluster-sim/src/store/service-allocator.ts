// Cluster IPs and node ports for Services, allocated deterministically (lowest free slot
// after the previous allocation, wrapping), so a seeded scenario always yields the same IPs.
import { ApiError } from './api-error.ts';
import { intToIpv4, ipv4ToInt, parseCidr4 } from '../ipv4.ts';
import type { Cidr4 } from '../ipv4.ts';

export const DEFAULT_SERVICE_CIDR = '10.96.0.0/16';
export const DEFAULT_NODE_PORT_RANGE: readonly [number, number] = [30000, 32767];

class SlotPool {
  readonly first: number;
  readonly last: number;
  readonly #used = new Set<number>();
  #cursor: number;
  constructor(first: number, last: number, start: number) {
    this.first = first;
    this.last = last;
    this.#cursor = start;
  }
  contains(n: number): boolean {
    return n >= this.first && n <= this.last;
  }
  reserve(n: number): boolean {
    if (this.#used.has(n)) return false;
    this.#used.add(n);
    return true;
  }
  allocate(): number | undefined {
    const span = this.last - this.first + 1;
    for (let i = 0; i < span; i++) {
      const n = this.first + ((this.#cursor - this.first + i) % span);
      if (!this.#used.has(n)) {
        this.#used.add(n);
        this.#cursor = n + 1 > this.last ? this.first : n + 1;
        return n;
      }
    }
    return undefined;
  }
  release(n: number): void {
    this.#used.delete(n);
  }
  get cursor(): number {
    return this.#cursor;
  }
  set cursor(n: number) {
    this.#cursor = n;
  }
}

export class ServiceAllocator {
  readonly cidr: Cidr4;
  readonly #ips: SlotPool;
  readonly #ports: SlotPool;

  constructor(serviceCIDR = DEFAULT_SERVICE_CIDR, nodePorts: readonly [number, number] = DEFAULT_NODE_PORT_RANGE) {
    const cidr = parseCidr4(serviceCIDR);
    if (!cidr || cidr.size < 16) throw new Error(`invalid service CIDR ${serviceCIDR} (need an IPv4 block of /28 or larger)`);
    this.cidr = cidr;
    // .1 is the `kubernetes` Service; dynamic allocation starts at .10 like small clusters do.
    this.#ips = new SlotPool(cidr.base + 1, cidr.base + cidr.size - 2, cidr.base + 10);
    this.#ports = new SlotPool(nodePorts[0], nodePorts[1], nodePorts[0]);
  }

  /** Allocation positions, so a dry run can leave no trace (see `restore`). */
  mark(): readonly [number, number] {
    return [this.#ips.cursor, this.#ports.cursor];
  }

  restore(mark: readonly [number, number]): void {
    this.#ips.cursor = mark[0];
    this.#ports.cursor = mark[1];
  }

  allocateIP(): string {
    const n = this.#ips.allocate();
    if (n === undefined) throw new ApiError(500, 'InternalError', 'failed to allocate a serviceIP: range is full');
    return intToIpv4(n);
  }

  /** Claims a requested IP. False if it is taken; IPs outside the range are accepted untracked. */
  reserveIP(ip: string): boolean {
    const n = ipv4ToInt(ip);
    return n === undefined || !this.#ips.contains(n) || this.#ips.reserve(n);
  }

  releaseIP(ip: string): void {
    const n = ipv4ToInt(ip);
    if (n !== undefined && this.#ips.contains(n)) this.#ips.release(n);
  }

  allocateNodePort(): number {
    const n = this.#ports.allocate();
    if (n === undefined) throw new ApiError(500, 'InternalError', 'failed to allocate a nodePort: range is full');
    return n;
  }

  /** False when taken or outside the node port range. */
  reserveNodePort(port: number): boolean {
    return this.#ports.contains(port) && this.#ports.reserve(port);
  }

  releaseNodePort(port: number): void {
    if (this.#ports.contains(port)) this.#ports.release(port);
  }
}
