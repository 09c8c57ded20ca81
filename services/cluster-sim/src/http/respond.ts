// Writing responses and reading request bodies.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, statusOf } from '../store/api-error.ts';

const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  sendJson(res, err.code, statusOf(err));
}

/** `{"kind":"Status","status":"Success",...}` as DELETE returns for kinds that do not echo the object. */
export function successStatus(details: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/** The raw request body (capped at 32 MiB). */
export async function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, 'BadRequest', 'the request body is too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBodyBytes(req)).toString('utf8');
}

/** Parses a JSON (or, for YAML content types, YAML) body; empty bodies give undefined. */
export function parseBody(text: string, contentType: string | undefined): unknown {
  if (/protobuf|cbor/i.test(contentType ?? '')) {
    throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (cluster-sim does not decode ${contentType})`);
  }
  if (text.trim() === '') return undefined;
  const yaml = /yaml/i.test(contentType ?? '');
  try {
    return yaml ? (parseYaml(text) as unknown) : (JSON.parse(text) as unknown);
  } catch (err) {
    throw badRequest(`the request body could not be decoded: ${(err as Error).message}`);
  }
}
