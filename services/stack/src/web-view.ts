// The web view beside `npm start`: `slicemesh ui` on this run's live log (its KUBE stream and
// subject prefix, its schema for the settings), served from this process.
import { openUiEngine, startUiServer } from '@slicemesh/cli';
import type { UiServer } from '@slicemesh/cli';
import { roleSeedFile } from '@slicemesh/nats';
import type { RunNames } from './run-names.ts';

export interface StackWebView {
  /** e.g. http://127.0.0.1:8080/ */
  readonly url: string;
  /** Set when the asked-for port was busy and another was taken. */
  readonly busyPort?: number;
  close(): Promise<void>;
}

export interface StackWebViewOptions {
  readonly natsUrl: string;
  readonly databaseUrl: string;
  readonly run: RunNames;
  readonly cluster: string;
  /** 0 picks a free port; a busy one is replaced by a free one rather than failing the stack. */
  readonly port: number;
  /** A locked-down NATS: the role seeds' directory (the view reads as the reader role). */
  readonly natsAuthDir?: string;
}

/** Opens the live log and serves the web view; rejects when NATS cannot be reached. */
export async function startWebView(o: StackWebViewOptions): Promise<StackWebView> {
  const reader = o.natsAuthDir === undefined ? {} : { nkeySeedFile: roleSeedFile(o.natsAuthDir, 'reader') };
  const engine = await openUiEngine({ live: { natsUrl: o.natsUrl, ...reader, databaseUrl: o.databaseUrl, schema: o.run.schema, cluster: o.cluster, names: o.run.names } });
  try {
    let server: UiServer;
    let busyPort: number | undefined;
    try {
      server = await startUiServer({ engine, port: o.port });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || o.port === 0) throw err;
      server = await startUiServer({ engine, port: 0 });
      busyPort = o.port;
    }
    return {
      url: server.url,
      ...(busyPort !== undefined ? { busyPort } : {}),
      close: async () => {
        await server.close();
        await engine.close();
      },
    };
  } catch (err) {
    await engine.close();
    throw err;
  }
}
