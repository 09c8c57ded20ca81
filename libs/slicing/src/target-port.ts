// Resolving a Service port to the port number of one pod (A.5.1, A.5.2, A.5.3).

import type { Container, EndpointSlicePort, Pod, Service, ServicePort } from '@slicemesh/model';

function findNamed(containers: readonly Container[] | undefined, name: string, protocol: string, sidecarsOnly: boolean): number | null {
  for (const c of containers ?? []) {
    if (sidecarsOnly && c.restartPolicy !== 'Always') continue;
    for (const p of c.ports ?? []) {
      if (p.name === name && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
    }
  }
  return null;
}

/**
 * The pod's port for `servicePort`: a numeric targetPort as is (absent = `port`), a named one
 * from the first regular container port with that name and protocol, else from a sidecar
 * (init container with `restartPolicy: Always`). Null when a named port is not found.
 */
export function findTargetPort(pod: Pod, servicePort: ServicePort): number | null {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  const protocol = servicePort.protocol ?? 'TCP';
  return findNamed(pod.spec.containers, target, protocol, false) ?? findNamed(pod.spec.initContainers, target, protocol, true);
}

/** True when every service port resolves the same way for every pod (no named targetPort). */
export function portsArePodIndependent(service: Service): boolean {
  return (service.spec.ports ?? []).every((p) => typeof (p.targetPort ?? p.port) === 'number');
}

/**
 * The slice ports a pod contributes to, in Service port order: one per resolvable service port,
 * `{name ('' when unnamed), port, protocol (default TCP), appProtocol?}`. Unresolvable named
 * ports are left out; a Service without ports (headless or not) yields [].
 */
export function endpointPortsForPod(service: Service, pod: Pod): EndpointSlicePort[] {
  const out: EndpointSlicePort[] = [];
  for (const sp of service.spec.ports ?? []) {
    const port = findTargetPort(pod, sp);
    if (port === null) continue;
    out.push({
      name: sp.name ?? '',
      port,
      protocol: sp.protocol ?? 'TCP',
      ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}),
    });
  }
  return out;
}
