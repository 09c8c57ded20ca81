// One watch request read as the API server writes it: one JSON event per '\n'-terminated line.
// client-node's own reader splits lines the way node:readline does, at U+2028 and U+2029 too, so
// an object with such a character in a string (legal JSON, which a server need not escape) was
// cut in two unparsable halves and silently dropped until the next relist. Here only '\n' ends a
// line, and a line that does not parse ends the watch with an error (the informer restarts it)
// rather than vanishing.

import { request as httpRequest } from 'node:http';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface WatchStreamOptions {
  readonly path: string;
  readonly query: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Each event: its type, object and the whole event. */
  readonly onEvent: (type: string, object: unknown, event: unknown) => void;
  /** Called once: null when the server ended the watch, else why it failed. */
  readonly onDone: (err: unknown) => void;
  /** No byte for this long ends the watch (as client-node's Watch.requestTimeoutMs), ms. */
  readonly idleTimeoutMs: number;
}

/** An error with the answer's status, which the informer reads as client-node's watch errors (statusCode). */
export class WatchStatusError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, statusText: string) {
    super(statusText);
    this.statusCode = statusCode;
  }
}

/** Splits '\n'-terminated lines out of chunks; a line may span chunks, and bytes of one character too. */
export class LineSplitter {
  #rest = '';
  readonly #decoder = new TextDecoder('utf-8');

  /** The complete lines in `chunk` (and before it), without their '\n'. */
  push(chunk: Uint8Array): string[] {
    const text = this.#rest + this.#decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    this.#rest = lines.pop() ?? '';
    return lines;
  }

  /** What is left at the end: a last line without its '\n', or ''. */
  end(): string {
    const rest = this.#rest + this.#decoder.decode();
    this.#rest = '';
    return rest;
  }
}

/** Starts the watch; abort the returned controller to end it (onDone is then called with the abort). */
export async function openWatchStream(kc: KubeConfig, o: WatchStreamOptions): Promise<AbortController> {
  const controller = new AbortController();
  let finished = false;
  const finish = (err: unknown): void => {
    if (finished) return;
    finished = true;
    controller.abort();
    o.onDone(err);
  };
  try {
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error('the kubeconfig has no current cluster');
    const url = new URL(server.replace(/\/+$/, '') + o.path);
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(o.query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const req = send(url, { ...opts, method: 'GET', headers: { ...(opts.headers as Record<string, string> | undefined), accept: 'application/json' }, signal: controller.signal });
    // Idle, not total: a watch lives as long as the server sends something (events, bookmarks).
    req.setTimeout(o.idleTimeoutMs, () => req.destroy(Object.assign(new Error(`the watch was idle for ${o.idleTimeoutMs} ms`), { name: 'TimeoutError' })));
    req.on('error', finish);
    req.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        res.resume();
        finish(new WatchStatusError(res.statusCode ?? 0, res.statusMessage ?? 'watch refused'));
        return;
      }
      const lines = new LineSplitter();
      const handle = (line: string): void => {
        if (line.trim() === '') return;
        let event: { type?: unknown; object?: unknown };
        try {
          event = JSON.parse(line) as { type?: unknown; object?: unknown };
        } catch (err) {
          finish(new Error(`the watch sent a line that is not JSON (${line.length} characters): ${err instanceof Error ? err.message : String(err)}`));
          return;
        }
        o.onEvent(String(event.type), event.object, event);
      };
      res.on('data', (chunk: Buffer) => {
        for (const line of lines.push(chunk)) if (!finished) handle(line);
      });
      res.on('end', () => {
        handle(lines.end());
        finish(null);
      });
      res.on('error', finish);
      res.on('close', () => finish(null));
    });
    req.end();
  } catch (err) {
    finish(err);
  }
  return controller;
}
