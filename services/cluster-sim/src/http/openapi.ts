// Minimal OpenAPI v3 documents. kubectl apply/create validate by default: with no OpenAPI at
// all they fail ("failed to download openapi"). Declaring, per kind, a PATCH operation that
// accepts the `fieldValidation` query parameter makes kubectl delegate validation to the
// server (which validates on write) and skip client-side schema checks. The documents carry
// no schemas and do not advertise strategic merge patch, so kubectl computes apply patches
// from its built-in types, which covers every kind served here.
import { SERVED, servedGroupVersions } from '../store/kinds.ts';
import type { KindInfo } from '../store/kinds.ts';

const REVISION = 'cluster-sim-1';

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export function openapiRoot(served: readonly KindInfo[] = SERVED): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const { group, version } of servedGroupVersions(served)) {
    const path = gvPath(group, version);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${REVISION}` };
  }
  return { paths };
}

const QUERY_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'force', 'pretty'];

export function openapiGroupVersion(group: string, version: string, served: readonly KindInfo[] = SERVED): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const k of served.filter((x) => x.group === group && x.version === version)) {
    const base = `/${gvPath(group, version)}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.resource}/{name}`;
    paths[base] = {
      patch: {
        operationId: `patch${k.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: k.kind },
        parameters: QUERY_PARAMS.map((name) => ({ name, in: 'query', schema: { type: name === 'force' ? 'boolean' : 'string' } })),
        requestBody: {
          content: Object.fromEntries(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'].map((t) => [t, { schema: { type: 'object' } }])),
        },
        responses: { '200': { description: 'OK' } },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'slicemesh cluster-sim', version: 'v1.32.0' },
    paths,
    components: { schemas: {} },
  };
}
