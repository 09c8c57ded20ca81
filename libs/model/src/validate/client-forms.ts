// Test-only data (not exported from the package): the same Kubernetes objects as three kinds of
// client put them on the wire, for client-serialisations.test.ts.
//
// - kubectl: `kubectl get -o json`, or the body of `kubectl apply`; a field without a value is
//   left out.
// - clientGo: a Go client's typed object with every field written out: plain fields at their
//   zero value ("", 0, false, {}, []), pointer fields and unset times as null (the familiar
//   `"creationTimestamp": null`).
// - python: the Python client's `to_dict()` under the wire names (its attribute_map): every
//   attribute the object does not set is present, as null.
//
// The three forms of one object carry the same values, so the API server stores the same object
// whichever it receives; the validators must give the same result for all three.

export interface ClientForms {
  readonly kubectl: unknown;
  readonly clientGo: unknown;
  readonly python: unknown;
}

const T0 = '2026-03-01T10:00:00Z';
const T1 = '2026-03-01T10:00:05Z';

/** ObjectMeta fields a Python to_dict() always carries, null unless set. */
const pyMeta = (set: Record<string, unknown>): Record<string, unknown> => ({
  annotations: null,
  creationTimestamp: null,
  deletionGracePeriodSeconds: null,
  deletionTimestamp: null,
  finalizers: null,
  generateName: null,
  generation: null,
  labels: null,
  managedFields: null,
  name: null,
  namespace: null,
  ownerReferences: null,
  resourceVersion: null,
  selfLink: null,
  uid: null,
  ...set,
});

/** ObjectMeta as a Go client writes it, zero values included. */
const goMeta = (set: Record<string, unknown>): Record<string, unknown> => ({
  name: '',
  generateName: '',
  namespace: '',
  selfLink: '',
  uid: '',
  resourceVersion: '',
  generation: 0,
  creationTimestamp: null,
  deletionTimestamp: null,
  deletionGracePeriodSeconds: null,
  labels: {},
  annotations: {},
  ownerReferences: [],
  finalizers: [],
  managedFields: [],
  ...set,
});

// A ClusterIP Service with one unnamed port, as read back from the API server (defaults applied).
export const readService: ClientForms = {
  kubectl: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop', uid: '6c1a2f9e-3b1d-4d2e-9a7c-1f2e3d4c5b6a', resourceVersion: '48213', creationTimestamp: T0, labels: { app: 'web' } },
    spec: {
      type: 'ClusterIP',
      selector: { app: 'web' },
      clusterIP: '10.96.12.7',
      clusterIPs: ['10.96.12.7'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }],
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
    },
    status: { loadBalancer: {} },
  },
  clientGo: {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: goMeta({ name: 'web', namespace: 'shop', uid: '6c1a2f9e-3b1d-4d2e-9a7c-1f2e3d4c5b6a', resourceVersion: '48213', creationTimestamp: T0, labels: { app: 'web' } }),
    spec: {
      ports: [{ name: '', protocol: 'TCP', appProtocol: null, port: 80, targetPort: 8080, nodePort: 0 }],
      selector: { app: 'web' },
      clusterIP: '10.96.12.7',
      clusterIPs: ['10.96.12.7'],
      type: 'ClusterIP',
      externalIPs: [],
      sessionAffinity: 'None',
      loadBalancerIP: '',
      loadBalancerSourceRanges: [],
      externalName: '',
      externalTrafficPolicy: '',
      healthCheckNodePort: 0,
      publishNotReadyAddresses: false,
      sessionAffinityConfig: null,
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      allocateLoadBalancerNodePorts: null,
      loadBalancerClass: null,
      internalTrafficPolicy: 'Cluster',
      trafficDistribution: null,
    },
    status: { loadBalancer: { ingress: [] }, conditions: [] },
  },
  python: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: pyMeta({ name: 'web', namespace: 'shop', uid: '6c1a2f9e-3b1d-4d2e-9a7c-1f2e3d4c5b6a', resourceVersion: '48213', creationTimestamp: T0, labels: { app: 'web' } }),
    spec: {
      allocateLoadBalancerNodePorts: null,
      clusterIP: '10.96.12.7',
      clusterIPs: ['10.96.12.7'],
      externalIPs: null,
      externalName: null,
      externalTrafficPolicy: null,
      healthCheckNodePort: null,
      internalTrafficPolicy: 'Cluster',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      loadBalancerClass: null,
      loadBalancerIP: null,
      loadBalancerSourceRanges: null,
      ports: [{ appProtocol: null, name: null, nodePort: null, port: 80, protocol: 'TCP', targetPort: 8080 }],
      publishNotReadyAddresses: null,
      selector: { app: 'web' },
      sessionAffinity: 'None',
      sessionAffinityConfig: null,
      trafficDistribution: null,
      type: 'ClusterIP',
    },
    status: { conditions: null, loadBalancer: { ingress: null } },
  },
};

// The same Service as a client creates it: nothing defaulted yet (no type, protocol, targetPort
// or sessionAffinity), so the zero values stand where the server will put its defaults.
export const createdService: ClientForms = {
  kubectl: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'web',
      namespace: 'shop',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":80}],"selector":{"app":"web"}}}\n' },
    },
    spec: { ports: [{ port: 80 }], selector: { app: 'web' } },
  },
  clientGo: {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: goMeta({
      name: 'web',
      namespace: 'shop',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":80}],"selector":{"app":"web"}}}\n' },
    }),
    spec: {
      ports: [{ name: '', protocol: '', appProtocol: null, port: 80, targetPort: 0, nodePort: 0 }],
      selector: { app: 'web' },
      clusterIP: '',
      clusterIPs: [],
      type: '',
      externalIPs: [],
      sessionAffinity: '',
      loadBalancerIP: '',
      loadBalancerSourceRanges: [],
      externalName: '',
      externalTrafficPolicy: '',
      healthCheckNodePort: 0,
      publishNotReadyAddresses: false,
      sessionAffinityConfig: null,
      ipFamilies: [],
      ipFamilyPolicy: null,
      allocateLoadBalancerNodePorts: null,
      loadBalancerClass: null,
      internalTrafficPolicy: null,
      trafficDistribution: null,
    },
    status: { loadBalancer: {} },
  },
  python: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: pyMeta({
      name: 'web',
      namespace: 'shop',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":80}],"selector":{"app":"web"}}}\n' },
    }),
    spec: {
      allocateLoadBalancerNodePorts: null,
      clusterIP: null,
      clusterIPs: null,
      externalIPs: null,
      externalName: null,
      externalTrafficPolicy: null,
      healthCheckNodePort: null,
      internalTrafficPolicy: null,
      ipFamilies: null,
      ipFamilyPolicy: null,
      loadBalancerClass: null,
      loadBalancerIP: null,
      loadBalancerSourceRanges: null,
      ports: [{ appProtocol: null, name: null, nodePort: null, port: 80, protocol: null, targetPort: null }],
      publishNotReadyAddresses: null,
      selector: { app: 'web' },
      sessionAffinity: null,
      sessionAffinityConfig: null,
      trafficDistribution: null,
      type: null,
    },
    status: null,
  },
};

// A LoadBalancer Service with two named ports and a load-balancer address.
export const loadBalancerService: ClientForms = {
  kubectl: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'gateway', namespace: 'edge', uid: '9e2d7c41-0a5b-4c3d-8e1f-2a3b4c5d6e7f', resourceVersion: '7731', creationTimestamp: T0 },
    spec: {
      type: 'LoadBalancer',
      selector: { app: 'gateway' },
      clusterIP: '10.96.40.2',
      clusterIPs: ['10.96.40.2'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 'http', nodePort: 31080 },
        { name: 'https', port: 443, protocol: 'TCP', targetPort: 'https', nodePort: 31443, appProtocol: 'https' },
      ],
      sessionAffinity: 'None',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32100,
      internalTrafficPolicy: 'Cluster',
      allocateLoadBalancerNodePorts: true,
    },
    status: { loadBalancer: { ingress: [{ ip: '203.0.113.10', ipMode: 'VIP' }] } },
  },
  clientGo: {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: goMeta({ name: 'gateway', namespace: 'edge', uid: '9e2d7c41-0a5b-4c3d-8e1f-2a3b4c5d6e7f', resourceVersion: '7731', creationTimestamp: T0 }),
    spec: {
      ports: [
        { name: 'http', protocol: 'TCP', appProtocol: null, port: 80, targetPort: 'http', nodePort: 31080 },
        { name: 'https', protocol: 'TCP', appProtocol: 'https', port: 443, targetPort: 'https', nodePort: 31443 },
      ],
      selector: { app: 'gateway' },
      clusterIP: '10.96.40.2',
      clusterIPs: ['10.96.40.2'],
      type: 'LoadBalancer',
      externalIPs: [],
      sessionAffinity: 'None',
      loadBalancerIP: '',
      loadBalancerSourceRanges: [],
      externalName: '',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32100,
      publishNotReadyAddresses: false,
      sessionAffinityConfig: null,
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      allocateLoadBalancerNodePorts: true,
      loadBalancerClass: null,
      internalTrafficPolicy: 'Cluster',
      trafficDistribution: null,
    },
    status: { loadBalancer: { ingress: [{ ip: '203.0.113.10', hostname: '', ipMode: 'VIP', ports: [] }] }, conditions: [] },
  },
  python: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: pyMeta({ name: 'gateway', namespace: 'edge', uid: '9e2d7c41-0a5b-4c3d-8e1f-2a3b4c5d6e7f', resourceVersion: '7731', creationTimestamp: T0 }),
    spec: {
      allocateLoadBalancerNodePorts: true,
      clusterIP: '10.96.40.2',
      clusterIPs: ['10.96.40.2'],
      externalIPs: null,
      externalName: null,
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32100,
      internalTrafficPolicy: 'Cluster',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      loadBalancerClass: null,
      loadBalancerIP: null,
      loadBalancerSourceRanges: null,
      ports: [
        { appProtocol: null, name: 'http', nodePort: 31080, port: 80, protocol: 'TCP', targetPort: 'http' },
        { appProtocol: 'https', name: 'https', nodePort: 31443, port: 443, protocol: 'TCP', targetPort: 'https' },
      ],
      publishNotReadyAddresses: null,
      selector: { app: 'gateway' },
      sessionAffinity: 'None',
      sessionAffinityConfig: null,
      trafficDistribution: null,
      type: 'LoadBalancer',
    },
    status: { conditions: null, loadBalancer: { ingress: [{ hostname: null, ip: '203.0.113.10', ipMode: 'VIP', ports: null }] } },
  },
};

const podOwner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-6b8f9c', uid: '5d0c1f7a-8e2b-4a63-b9d4-7f1e2c3a4b5d', controller: true, blockOwnerDeletion: true };
const podLabels = { app: 'web', 'pod-template-hash': '6b8f9c' };
const podMeta = { name: 'web-6b8f9c-x2k4q', generateName: 'web-6b8f9c-', namespace: 'shop', uid: '8a3e2f10-6c4b-4d7e-9f21-0b5c8d7e6a41', resourceVersion: '48290', creationTimestamp: T0, labels: podLabels, ownerReferences: [podOwner] };

/** A Python V1Container with only name, image and ports set. */
const pyContainer = (ports: unknown): Record<string, unknown> => ({
  args: null,
  command: null,
  env: null,
  envFrom: null,
  image: 'nginx:1.27',
  imagePullPolicy: 'IfNotPresent',
  lifecycle: null,
  livenessProbe: null,
  name: 'web',
  ports,
  readinessProbe: null,
  resizePolicy: null,
  resources: { claims: null, limits: null, requests: null },
  restartPolicy: null,
  securityContext: null,
  startupProbe: null,
  stdin: null,
  stdinOnce: null,
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  tty: null,
  volumeDevices: null,
  volumeMounts: null,
  workingDir: null,
});

// A running, ready Pod.
export const runningPod: ClientForms = {
  kubectl: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: podMeta,
    spec: {
      containers: [
        {
          name: 'web',
          image: 'nginx:1.27',
          ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
          resources: {},
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: 'node-a1',
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: T0 },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: T1 },
      ],
      hostIP: '10.0.1.11',
      podIP: '10.244.1.5',
      podIPs: [{ ip: '10.244.1.5' }],
      startTime: T0,
      qosClass: 'BestEffort',
    },
  },
  clientGo: {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: goMeta(podMeta),
    spec: {
      volumes: [],
      initContainers: [],
      containers: [
        {
          name: 'web',
          image: 'nginx:1.27',
          command: [],
          args: [],
          workingDir: '',
          ports: [{ name: 'http', hostPort: 0, containerPort: 8080, protocol: 'TCP', hostIP: '' }],
          env: [],
          resources: {},
          restartPolicy: null,
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
          stdin: false,
          tty: false,
        },
      ],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      nodeSelector: {},
      serviceAccountName: 'default',
      nodeName: 'node-a1',
      hostNetwork: false,
      hostname: '',
      subdomain: '',
      schedulerName: 'default-scheduler',
      tolerations: [],
      priorityClassName: '',
      enableServiceLinks: true,
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: T0, reason: '', message: '' },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: T1, reason: '', message: '' },
      ],
      message: '',
      reason: '',
      nominatedNodeName: '',
      hostIP: '10.0.1.11',
      hostIPs: [{ ip: '10.0.1.11' }],
      podIP: '10.244.1.5',
      podIPs: [{ ip: '10.244.1.5' }],
      startTime: T0,
      initContainerStatuses: [],
      containerStatuses: [],
      qosClass: 'BestEffort',
    },
  },
  python: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: pyMeta(podMeta),
    spec: {
      activeDeadlineSeconds: null,
      affinity: null,
      automountServiceAccountToken: null,
      containers: [pyContainer([{ containerPort: 8080, hostIP: null, hostPort: null, name: 'http', protocol: 'TCP' }])],
      dnsConfig: null,
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      ephemeralContainers: null,
      hostAliases: null,
      hostIPC: null,
      hostNetwork: null,
      hostPID: null,
      hostname: null,
      imagePullSecrets: null,
      initContainers: null,
      nodeName: 'node-a1',
      nodeSelector: null,
      os: null,
      overhead: null,
      preemptionPolicy: null,
      priority: null,
      priorityClassName: null,
      readinessGates: null,
      restartPolicy: 'Always',
      runtimeClassName: null,
      schedulerName: 'default-scheduler',
      securityContext: null,
      serviceAccountName: 'default',
      subdomain: null,
      tolerations: null,
      volumes: null,
    },
    status: {
      conditions: [
        { lastProbeTime: null, lastTransitionTime: T0, message: null, reason: null, status: 'True', type: 'PodScheduled' },
        { lastProbeTime: null, lastTransitionTime: T1, message: null, reason: null, status: 'True', type: 'Ready' },
      ],
      containerStatuses: null,
      hostIP: '10.0.1.11',
      hostIPs: null,
      initContainerStatuses: null,
      message: null,
      nominatedNodeName: null,
      phase: 'Running',
      podIP: '10.244.1.5',
      podIPs: [{ ip: '10.244.1.5' }],
      qosClass: 'BestEffort',
      reason: null,
      startTime: T0,
    },
  },
};

// A Pod not scheduled yet: no node, no IP, an unnamed container port with the protocol left out.
export const pendingPod: ClientForms = {
  kubectl: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...podMeta, name: 'web-6b8f9c-pend1' },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: T0, reason: 'Unschedulable' }], qosClass: 'BestEffort' },
  },
  clientGo: {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: goMeta({ ...podMeta, name: 'web-6b8f9c-pend1' }),
    spec: {
      initContainers: [],
      containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ name: '', hostPort: 0, containerPort: 8080, protocol: '', hostIP: '' }], resources: {} }],
      nodeName: '',
      hostname: '',
      subdomain: '',
    },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: T0, reason: 'Unschedulable', message: '' }],
      hostIP: '',
      podIP: '',
      podIPs: [],
      qosClass: 'BestEffort',
    },
  },
  python: {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: pyMeta({ ...podMeta, name: 'web-6b8f9c-pend1' }),
    spec: { containers: [pyContainer([{ containerPort: 8080, hostIP: null, hostPort: null, name: null, protocol: null }])], hostname: null, initContainers: null, nodeName: null, subdomain: null },
    status: {
      conditions: [{ lastProbeTime: null, lastTransitionTime: T0, message: null, reason: 'Unschedulable', status: 'False', type: 'PodScheduled' }],
      hostIP: null,
      phase: 'Pending',
      podIP: null,
      podIPs: null,
      qosClass: 'BestEffort',
    },
  },
};

const nodeLabels = { 'kubernetes.io/hostname': 'node-a1', 'topology.kubernetes.io/zone': 'zone-a' };
const nodeMeta = { name: 'node-a1', uid: '3f2e1d0c-9b8a-4765-8432-10fedcba9876', resourceVersion: '51002', creationTimestamp: T0, labels: nodeLabels };
const readyCondition = { type: 'Ready', status: 'True', lastHeartbeatTime: T1, lastTransitionTime: T0, reason: 'KubeletReady', message: 'kubelet is posting ready status' };

// A schedulable, ready Node.
export const readyNode: ClientForms = {
  kubectl: {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: nodeMeta,
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'kind://docker/kind/node-a1' },
    status: {
      addresses: [
        { type: 'InternalIP', address: '10.0.1.11' },
        { type: 'Hostname', address: 'node-a1' },
      ],
      allocatable: { cpu: '3800m', memory: '15Gi', pods: '110' },
      capacity: { cpu: '4', memory: '16Gi', pods: '110' },
      conditions: [readyCondition],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { kubeletVersion: 'v1.35.0', osImage: 'Debian GNU/Linux 13', architecture: 'amd64' },
    },
  },
  clientGo: {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: goMeta(nodeMeta),
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'kind://docker/kind/node-a1', unschedulable: false, taints: [], configSource: null, externalID: '' },
    status: {
      capacity: { cpu: '4', memory: '16Gi', pods: '110' },
      allocatable: { cpu: '3800m', memory: '15Gi', pods: '110' },
      phase: '',
      conditions: [readyCondition],
      addresses: [
        { type: 'InternalIP', address: '10.0.1.11' },
        { type: 'Hostname', address: 'node-a1' },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { kubeletVersion: 'v1.35.0', osImage: 'Debian GNU/Linux 13', architecture: 'amd64' },
      images: [],
      volumesInUse: [],
      volumesAttached: [],
      config: null,
    },
  },
  python: {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: pyMeta(nodeMeta),
    spec: { configSource: null, externalID: null, podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'], providerID: 'kind://docker/kind/node-a1', taints: null, unschedulable: null },
    status: {
      addresses: [
        { address: '10.0.1.11', type: 'InternalIP' },
        { address: 'node-a1', type: 'Hostname' },
      ],
      allocatable: { cpu: '3800m', memory: '15Gi', pods: '110' },
      capacity: { cpu: '4', memory: '16Gi', pods: '110' },
      conditions: [{ lastHeartbeatTime: T1, lastTransitionTime: T0, message: 'kubelet is posting ready status', reason: 'KubeletReady', status: 'True', type: 'Ready' }],
      config: null,
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      features: null,
      images: null,
      nodeInfo: { kubeletVersion: 'v1.35.0', osImage: 'Debian GNU/Linux 13', architecture: 'amd64' },
      phase: null,
      runtimeHandlers: null,
      volumesAttached: null,
      volumesInUse: null,
    },
  },
};

const epsMeta = { name: 'legacy-db', namespace: 'data', uid: '1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d', resourceVersion: '3301', creationTimestamp: T0, labels: { app: 'legacy-db' } };
const dbRef = { kind: 'Pod', namespace: 'data', name: 'db-1', uid: '77aa88bb-99cc-4dd0-8ee1-ff0011223344' };

// Hand-made Endpoints of a selectorless Service: an unnamed port, a hostname, a targetRef.
export const selectorlessEndpoints: ClientForms = {
  kubectl: {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: epsMeta,
    subsets: [
      {
        addresses: [{ ip: '10.0.9.10' }, { ip: '10.0.9.11', hostname: 'db-1', nodeName: 'node-b1', targetRef: dbRef }],
        notReadyAddresses: [{ ip: '10.0.9.12' }],
        ports: [{ port: 5432, protocol: 'TCP' }],
      },
    ],
  },
  clientGo: {
    kind: 'Endpoints',
    apiVersion: 'v1',
    metadata: goMeta(epsMeta),
    subsets: [
      {
        addresses: [
          { ip: '10.0.9.10', hostname: '', nodeName: null, targetRef: null },
          { ip: '10.0.9.11', hostname: 'db-1', nodeName: 'node-b1', targetRef: { ...dbRef, apiVersion: '', resourceVersion: '', fieldPath: '' } },
        ],
        notReadyAddresses: [{ ip: '10.0.9.12', hostname: '', nodeName: null, targetRef: null }],
        ports: [{ name: '', port: 5432, protocol: '', appProtocol: null }],
      },
    ],
  },
  python: {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: pyMeta(epsMeta),
    subsets: [
      {
        addresses: [
          { hostname: null, ip: '10.0.9.10', nodeName: null, targetRef: null },
          { hostname: 'db-1', ip: '10.0.9.11', nodeName: 'node-b1', targetRef: { ...dbRef, apiVersion: null, fieldPath: null, resourceVersion: null } },
        ],
        notReadyAddresses: [{ hostname: null, ip: '10.0.9.12', nodeName: null, targetRef: null }],
        ports: [{ appProtocol: null, name: null, port: 5432, protocol: 'TCP' }],
      },
    ],
  },
};

const sliceMeta = {
  name: 'web-x7k2p',
  generateName: 'web-',
  namespace: 'shop',
  uid: 'e5f6a7b8-c9d0-4e1f-a2b3-c4d5e6f7a8b9',
  resourceVersion: '48301',
  generation: 2,
  creationTimestamp: T0,
  labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
  annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': T1 },
  ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: '6c1a2f9e-3b1d-4d2e-9a7c-1f2e3d4c5b6a', controller: true, blockOwnerDeletion: true }],
};
const webRef = { kind: 'Pod', namespace: 'shop', name: 'web-6b8f9c-x2k4q', uid: '8a3e2f10-6c4b-4d7e-9f21-0b5c8d7e6a41' };

// The controller's slice for the unnamed port: upstream writes the port name as "".
export const controllerSlice: ClientForms = {
  kubectl: {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: sliceMeta,
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-a1', targetRef: webRef, zone: 'zone-a' }],
    ports: [{ name: '', port: 8080, protocol: 'TCP' }],
  },
  clientGo: {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: goMeta(sliceMeta),
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['10.244.1.5'],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: null,
        targetRef: { ...webRef, apiVersion: '', resourceVersion: '', fieldPath: '' },
        deprecatedTopology: {},
        nodeName: 'node-a1',
        zone: 'zone-a',
        hints: null,
      },
    ],
    ports: [{ name: '', protocol: 'TCP', port: 8080, appProtocol: null }],
  },
  python: {
    addressType: 'IPv4',
    apiVersion: 'discovery.k8s.io/v1',
    endpoints: [
      {
        addresses: ['10.244.1.5'],
        conditions: { ready: true, serving: true, terminating: false },
        deprecatedTopology: null,
        hints: null,
        hostname: null,
        nodeName: 'node-a1',
        targetRef: { ...webRef, apiVersion: null, fieldPath: null, resourceVersion: null },
        zone: 'zone-a',
      },
    ],
    kind: 'EndpointSlice',
    metadata: pyMeta(sliceMeta),
    ports: [{ appProtocol: null, name: '', port: 8080, protocol: 'TCP' }],
  },
};
