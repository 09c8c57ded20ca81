// Per-kind create/update rules (the registry "strategies"): defaults, validation, and the
// resources a kind holds. The store applies them to every write, from HTTP or in-process.
import { fieldInvalid, fieldRequired, invalid } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import { completeEvent, eventCauses } from './event-strategy.ts';
import { kindInfo } from './kinds.ts';
import type { KindInfo } from './kinds.ts';
import { completeLease, leaseCauses } from './lease-strategy.ts';
import type { ServiceAllocator } from './service-allocator.ts';
import { completeServiceExport, serviceExportCauses } from './service-export-strategy.ts';
import { completeServiceImport, serviceImportCauses } from './service-import-strategy.ts';
import { completeService, releaseService, serviceCauses } from './service-strategy.ts';
import { completeSlice, sliceCauses } from './slice-strategy.ts';
import { jsonEqual } from './types.ts';
import type { KubeObj } from './types.ts';
import { isPort, isRecord, metadataCauses, PROTOCOLS } from './validation.ts';
import type { NameRule } from './validation.ts';

export interface StrategyContext {
  readonly allocator: ServiceAllocator;
  /** Pods created without spec.terminationGracePeriodSeconds get this. */
  readonly defaultPodGraceSeconds: number;
}

/** What validation may depend on besides the object. */
export interface CauseContext {
  /** The stored object on update. */
  readonly prev?: KubeObj;
  /** The resource the write came through (a view of the kind, e.g. events.k8s.io/v1). */
  readonly via: KindInfo;
}

export interface Strategy {
  readonly nameRule: NameRule;
  /** False for kinds whose objects carry no metadata.generation (Events, Leases). Default true. */
  readonly generation?: boolean;
  /** Extra field problems beyond metadata. */
  causes(obj: KubeObj, ctx: CauseContext): StatusCause[];
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

const sliceStrategy: Strategy = {
  nameRule: 'subdomain',
  causes: (obj, ctx) => sliceCauses(obj, ctx.prev),
  complete: (obj) => completeSlice(obj),
  release: () => {},
};

const eventStrategy: Strategy = {
  nameRule: 'pathSegment',
  generation: false,
  causes: (obj, ctx) => eventCauses(obj, { strict: ctx.via.group === 'events.k8s.io', ...(ctx.prev ? { prev: ctx.prev } : {}), same: jsonEqual }),
  complete: (obj) => completeEvent(obj),
  release: () => {},
};

const leaseStrategy: Strategy = {
  nameRule: 'subdomain',
  generation: false,
  causes: (obj) => leaseCauses(obj),
  complete: (obj) => completeLease(obj),
  release: () => {},
};

const serviceExportStrategy: Strategy = {
  nameRule: 'subdomain',
  causes: (obj) => serviceExportCauses(obj),
  complete: (obj) => completeServiceExport(obj),
  release: () => {},
};

const serviceImportStrategy: Strategy = {
  nameRule: 'subdomain',
  causes: (obj) => serviceImportCauses(obj),
  complete: (obj) => completeServiceImport(obj),
  release: () => {},
};

const STRATEGIES: Readonly<Record<string, Strategy>> = {
  Namespace: namespaceStrategy,
  Node: plain('subdomain'),
  Pod: podStrategy,
  Service: serviceStrategy,
  Endpoints: plain('subdomain'),
  EndpointSlice: sliceStrategy,
  Event: eventStrategy,
  Lease: leaseStrategy,
  ServiceExport: serviceExportStrategy,
  ServiceImport: serviceImportStrategy,
};

export function strategyFor(kind: string): Strategy {
  return STRATEGIES[kind] ?? plain('subdomain');
}

/** All validation problems of `obj` for its kind (metadata first). */
export function validationCauses(obj: KubeObj, ctx: CauseContext = { via: kindInfo(obj.kind) }): StatusCause[] {
  const strategy = strategyFor(obj.kind);
  const meta = metadataCauses(obj, strategy.nameRule);
  return meta.length > 0 ? meta : strategy.causes(obj, ctx);
}
