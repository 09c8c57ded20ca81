// One JSON request to the API server through the current context's transport (TLS material,
// bearer token or basic auth, as client-node applies them), answering with status, headers and
// body whatever the status: the callers decide what a 404 or a 409 means.

import { request as httpRequest } from 'node:http';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface KubeRequest {
  readonly method: string;
  /** Path and query, e.g. `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices`. */
  readonly path: string;
  /** Sent as JSON when defined. */
  readonly body?: unknown;
  /** Content type of the body. Defaults to `application/json`; patches name their flavour. */
  readonly contentType?: string;
  readonly timeoutMs: number;
  readonly userAgent?: string;
}

export interface KubeResponse {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  readonly json: unknown;
}

/** Sends the request; rejects only when no complete response arrived (refused, reset, timeout). */
export async function kubeRequest(kc: KubeConfig, req: KubeRequest): Promise<KubeResponse> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster');
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const url = new URL(server.replace(/\/+$/, '') + req.path);
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
  const headers: Record<string, string | number> = { ...(opts.headers as Record<string, string> | undefined), accept: 'application/json' };
  if (req.userAgent !== undefined) headers['user-agent'] = req.userAgent;
  if (payload !== undefined) {
    headers['content-type'] = req.contentType ?? 'application/json';
    headers['content-length'] = payload.length;
  }
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const r = send(url, { ...opts, method: req.method, headers, timeout: req.timeoutMs }, resolve);
    r.on('timeout', () => r.destroy(new Error(`no answer in ${req.timeoutMs} ms`)));
    r.on('error', reject);
    r.end(payload);
  });
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return { status: res.statusCode ?? 0, headers: out, text, json };
}
