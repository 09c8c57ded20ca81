// Reads the input text: stdin, or the file named by -f ("-" also means stdin).

import { readFile } from 'node:fs/promises';
import { quoteForMessage } from '@slicemesh/model';
import { UsageError } from './cli-error.ts';

export interface InputSource {
  /** stdin text, or chunks to be read (process.stdin). */
  readonly stdin: string | AsyncIterable<string | Uint8Array>;
  /** When true and no file is given, refuse to wait for a terminal. */
  readonly stdinIsTTY?: boolean;
  /** Defaults to fs.readFile(path, 'utf8'). */
  readonly readFile?: (path: string) => Promise<string>;
}

export interface InputText {
  readonly text: string;
  /** How errors name the input: the file path, or `stdin`. */
  readonly source: string;
}

async function readAll(stdin: InputSource['stdin']): Promise<string> {
  if (typeof stdin === 'string') return stdin;
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

const FILE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
};

/** Reads the whole input. Throws UsageError when the file cannot be read or stdin is a terminal. */
export async function readInput(file: string | undefined, io: InputSource): Promise<InputText> {
  if (file === undefined || file === '-') {
    if (io.stdinIsTTY === true) throw new UsageError('no input: pipe Kubernetes JSON into stdin or pass -f FILE');
    return { text: await readAll(io.stdin), source: 'stdin' };
  }
  try {
    return { text: await (io.readFile ?? ((p: string) => readFile(p, 'utf8')))(file), source: file };
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    throw new UsageError(`cannot read ${quoteForMessage(file)}: ${FILE_ERRORS[code] ?? (code || 'read failed')}`);
  }
}
