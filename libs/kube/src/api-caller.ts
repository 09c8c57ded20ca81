// The request helpers the raw JSON APIs (slices, events) share: one call through the
// authenticated transport, where no answer at all becomes a KubeWriteError with status 0, and
// the check that an answer is a JSON object.

import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from './request.ts';
import type { KubeResponse } from './request.ts';
import type { KubeJson, KubeVerb } from './slice-api.ts';
import { KubeWriteError } from './slice-api.ts';

export interface ApiCaller {
  send(verb: KubeVerb, method: string, path: string, body?: unknown, contentType?: string): Promise<KubeResponse>;
  /** The answer's JSON object; a KubeWriteError when it is not one. */
  object(verb: KubeVerb, path: string, res: KubeResponse): KubeJson;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function apiCaller(kc: KubeConfig, opts: { readonly timeoutMs?: number; readonly userAgent?: string }): ApiCaller {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const userAgent = opts.userAgent ?? 'slicemesh-publisher';
  return {
    async send(verb, method, path, body, contentType) {
      try {
        return await kubeRequest(kc, { method, path, body, timeoutMs, userAgent, ...(contentType === undefined ? {} : { contentType }) });
      } catch (err) {
        throw new KubeWriteError(verb, path, 0, '', err instanceof Error ? err.message : String(err), undefined, { cause: err });
      }
    },
    object(verb, path, res) {
      if (!isRecord(res.json)) throw new KubeWriteError(verb, path, res.status, '', 'the response is not a JSON object');
      return res.json;
    },
  };
}
