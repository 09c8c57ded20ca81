// Per-kind create/update rules (the registry "strategies"): defaults, validation, and the
// resources a kind holds. The store applies them to every write, from HTTP or in-process.
import { fieldInvalid, fieldRequired, invalid } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import { kindInfo } from './kinds.ts';
import type { ServiceAllocator } from './service-allocator.ts';
import { completeService, releaseService, serviceCauses } from './service-strategy.ts';
import type { KubeObj } from './types.ts';
import { isPort, isRecord, metadataCauses, PROTOCOLS } from './validation.ts';
import type { NameRule } from './validation.ts';

export interface StrategyContext {
  readonly allocator: ServiceAllocator;
  /** Pods created without spec.terminationGracePeriodSeconds get this. */
  readonly defaultPodGraceSeconds: number;
}

export interface Strategy {
  readonly nameRule: NameRule;
  /** Extra field problems beyond metadata. */
  causes(obj: KubeObj): StatusCause[];
  /** Fills defaults (and allocates) for a valid object; `prev` is set on update. */
  complete(obj: KubeObj, prev: KubeObj | undefined, ctx: StrategyContext): KubeObj;
  /** Releases what `from` holds and `keep` does not. */
  release(from: KubeObj, keep: KubeObj | undefined, ctx: StrategyContext): void;
}

const plain = (nameRule: NameRule, causes: (obj: KubeObj) => StatusCause[] = () => []): Strategy => ({
  nameRule,
  causes,
  complete: (obj) => obj,
  release: () => {},
});

function podCauses(obj: KubeObj): StatusCause[] {
  const spec = obj['spec'];
  if (!isRecord(spec)) return [fieldRequired('spec')];
  const containers = spec['containers'];
  if (!Array.isArray(containers) || containers.length === 0) return [fieldRequired('spec.containers')];
  const causes: StatusCause[] = [];
  containers.forEach((c: unknown, i) => {
    if (!isRecord(c) || typeof c['name'] !== 'string' || c['name'] === '') return void causes.push(fieldRequired(`spec.containers[${i}].name`));
    const ports = c['ports'] ?? [];
    if (!Array.isArray(ports)) return void causes.push(fieldInvalid(`spec.containers[${i}].ports`, ports, 'must be a list'));
    ports.forEach((p: unknown, j) => {
      const at = `spec.containers[${i}].ports[${j}]`;
      if (!isRecord(p) || !isPort(p['containerPort'])) causes.push(fieldInvalid(`${at}.containerPort`, isRecord(p) ? p['containerPort'] : p, 'must be between 1 and 65535, inclusive'));
      else if (p['protocol'] !== undefined && !PROTOCOLS.includes(p['protocol'] as string)) causes.push(fieldInvalid(`${at}.protocol`, p['protocol'], 'supported values: "SCTP", "TCP", "UDP"'));
    });
  });
  return causes;
}

function defaultContainerPorts(containers: unknown): unknown {
  if (!Array.isArray(containers)) return containers;
  return containers.map((c: Record<string, unknown>) =>
    Array.isArray(c['ports']) ? { ...c, ports: c['ports'].map((p: Record<string, unknown>) => ({ ...p, protocol: p['protocol'] ?? 'TCP' })) } : c,
  );
}

const podStrategy: Strategy = {
  nameRule: 'subdomain',
  causes: podCauses,
  complete(obj, prev, ctx) {
    const spec = obj['spec'] as Record<string, unknown>;
    const status = isRecord(obj['status']) ? obj['status'] : {};
    return {
      ...obj,
      spec: {
        ...spec,
        containers: defaultContainerPorts(spec['containers']),
        ...(spec['initContainers'] ? { initContainers: defaultContainerPorts(spec['initContainers']) } : {}),
        terminationGracePeriodSeconds: spec['terminationGracePeriodSeconds'] ?? (prev ? (prev['spec'] as Record<string, unknown>)['terminationGracePeriodSeconds'] : undefined) ?? ctx.defaultPodGraceSeconds,
      },
      status: { ...status, phase: status['phase'] ?? 'Pending' },
    };
  },
  release: () => {},
};

const namespaceStrategy: Strategy = {
  nameRule: 'label',
  causes: () => [],
  complete(obj) {
    const status = isRecord(obj['status']) ? obj['status'] : {};
    return {
      ...obj,
      metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name } },
      spec: { finalizers: ['kubernetes'], ...(isRecord(obj['spec']) ? obj['spec'] : {}) },
      status: { ...status, phase: status['phase'] ?? 'Active' },
    };
  },
  release: () => {},
};

const serviceStrategy: Strategy = {
  nameRule: 'dns1035',
  causes: serviceCauses,
  complete(obj, prev, ctx) {
    const { obj: done, causes } = completeService(obj, prev, ctx.allocator);
    if (causes.length > 0) throw invalid(kindInfo('Service'), obj.metadata.name, causes);
    return done;
  },
  release: (from, keep, ctx) => releaseService(from, keep, ctx.allocator),
};

const ADDRESS_TYPES = ['IPv4', 'IPv6', 'FQDN'];

const sliceStrategy: Strategy = {
  nameRule: 'subdomain',
  causes: (obj) => {
    const t = obj['addressType'];
    if (t === undefined) return [fieldRequired('addressType')];
    return ADDRESS_TYPES.includes(t as string) ? [] : [fieldInvalid('addressType', t, 'supported values: "FQDN", "IPv4", "IPv6"')];
  },
  complete: (obj) => ({ ...obj, endpoints: obj['endpoints'] ?? [] }),
  release: () => {},
};

const STRATEGIES: Readonly<Record<string, Strategy>> = {
  Namespace: namespaceStrategy,
  Node: plain('subdomain'),
  Pod: podStrategy,
  Service: serviceStrategy,
  Endpoints: plain('subdomain'),
  EndpointSlice: sliceStrategy,
};

export function strategyFor(kind: string): Strategy {
  return STRATEGIES[kind] ?? plain('subdomain');
}

/** All validation problems of `obj` for its kind (metadata first). */
export function validationCauses(obj: KubeObj): StatusCause[] {
  const strategy = strategyFor(obj.kind);
  const meta = metadataCauses(obj, strategy.nameRule);
  return meta.length > 0 ? meta : strategy.causes(obj);
}
