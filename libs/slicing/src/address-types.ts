// Which EndpointSlice address types a Service gets slices for (A.2.1, A.2.2).

import type { AddressType, Service } from '@slicemesh/model';
import { ipFamilyOf } from '@slicemesh/model';

/** The address types this controller produces; `IP` and `FQDN` are never among them. */
export type SliceAddressType = Extract<AddressType, 'IPv4' | 'IPv6'>;

/** `clusterIP` is set and is not `None`: the Service is not headless (A.9.3). */
export function isServiceIPSet(service: Service): boolean {
  const ip = service.spec.clusterIP ?? '';
  return ip !== '' && ip !== 'None';
}

/**
 * The supported address types of a Service, always in the order IPv4, IPv6.
 * - `spec.ipFamilies` non-empty: exactly those families (A.2.1).
 * - otherwise a ClusterIP that is set and not `None`: its single family, IPv4 unless the
 *   ClusterIP parses as IPv6 (A.2.2);
 * - otherwise (headless, or no ClusterIP): both.
 */
export function serviceAddressTypes(service: Service): readonly SliceAddressType[] {
  const families = service.spec.ipFamilies ?? [];
  if (families.length > 0) {
    const out: SliceAddressType[] = [];
    if (families.includes('IPv4')) out.push('IPv4');
    if (families.includes('IPv6')) out.push('IPv6');
    if (out.length > 0) return out;
  }
  if (isServiceIPSet(service)) {
    return [ipFamilyOf(service.spec.clusterIP ?? '') === 'IPv6' ? 'IPv6' : 'IPv4'];
  }
  return ['IPv4', 'IPv6'];
}
