// Grouping parsed objects by kind, and the stable order every command prints in.

import type { Endpoints, EndpointSlice, KubeObject, Node, ObjectMeta, Pod, Service } from '@slicemesh/model';

export interface Inventory {
  readonly services: readonly Service[];
  readonly pods: readonly Pod[];
  readonly nodes: readonly Node[];
  readonly endpoints: readonly Endpoints[];
  readonly slices: readonly EndpointSlice[];
}

/** Splits objects by kind, keeping input order within each kind. */
export function inventory(objects: readonly KubeObject[]): Inventory {
  const services: Service[] = [];
  const pods: Pod[] = [];
  const nodes: Node[] = [];
  const endpoints: Endpoints[] = [];
  const slices: EndpointSlice[] = [];
  for (const o of objects) {
    switch (o.kind) {
      case 'Service':
        services.push(o);
        break;
      case 'Pod':
        pods.push(o);
        break;
      case 'Node':
        nodes.push(o);
        break;
      case 'Endpoints':
        endpoints.push(o);
        break;
      case 'EndpointSlice':
        slices.push(o);
        break;
      default: {
        const never: never = o;
        throw new Error(`unexpected kind ${(never as KubeObject).kind}`);
      }
    }
  }
  return { services, pods, nodes, endpoints, slices };
}

/** `<namespace>/<name>` (namespace `default` when absent). */
export const keyOf = (meta: ObjectMeta): string => `${meta.namespace ?? 'default'}/${meta.name}`;

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Sorted copy by namespace, then name (plain code-unit order, locale independent). */
export function sortByKey<T extends { readonly metadata: ObjectMeta }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => compare(a.metadata.namespace ?? 'default', b.metadata.namespace ?? 'default') || compare(a.metadata.name, b.metadata.name));
}
