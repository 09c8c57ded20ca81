// Just enough of the Kubernetes protobuf encoding to accept what kubectl's typed clients
// send for Namespaces (`kubectl create namespace x`): the `k8s\0` envelope around a
// runtime.Unknown, and the ObjectMeta fields a create carries (name, generateName, labels,
// annotations). Other kinds answer 415 and should be sent as JSON (`kubectl apply -f`).
import { ApiError } from '../store/api-error.ts';

type Fields = Map<number, (Uint8Array | number)[]>;

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const byte = buf[pos++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, pos];
    shift += 7;
  }
}

/** Top-level fields of one message: varints as numbers, length-delimited as bytes. */
function fields(buf: Uint8Array): Fields {
  const out: Fields = new Map();
  let pos = 0;
  while (pos < buf.length) {
    let tag: number;
    [tag, pos] = readVarint(buf, pos);
    const field = Math.floor(tag / 8);
    let value: Uint8Array | number;
    switch (tag & 7) {
      case 0: [value, pos] = readVarint(buf, pos); break;
      case 1: value = 0; pos += 8; break;
      case 5: value = 0; pos += 4; break;
      case 2: {
        let len: number;
        [len, pos] = readVarint(buf, pos);
        value = buf.subarray(pos, pos + len);
        pos += len;
        break;
      }
      default: throw new Error(`unsupported wire type ${tag & 7}`);
    }
    if (pos > buf.length) throw new Error('truncated message');
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

const text = (v: Uint8Array | number | undefined): string | undefined => (v instanceof Uint8Array ? new TextDecoder().decode(v) : undefined);

function stringMap(entries: readonly (Uint8Array | number)[] | undefined): Record<string, string> | undefined {
  if (!entries) return undefined;
  const out: Record<string, string> = {};
  for (const e of entries) {
    if (!(e instanceof Uint8Array)) continue;
    const f = fields(e);
    out[text(f.get(1)?.[0]) ?? ''] = text(f.get(2)?.[0]) ?? '';
  }
  return out;
}

function objectMeta(buf: Uint8Array): Record<string, unknown> {
  const f = fields(buf);
  const name = text(f.get(1)?.[0]);
  const generateName = text(f.get(2)?.[0]);
  const labels = stringMap(f.get(11));
  const annotations = stringMap(f.get(12));
  return { ...(name ? { name } : {}), ...(generateName ? { generateName } : {}), ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
}

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** Decodes a protobuf request body into the JSON object it stands for (Namespaces only). */
export function decodeProtobufBody(body: Uint8Array): Record<string, unknown> {
  const unsupported = (what: string) => new ApiError(415, 'UnsupportedMediaType', `cluster-sim decodes protobuf only for Namespaces (got ${what}); send JSON instead, e.g. kubectl apply -f`);
  if (!MAGIC.every((b, i) => body[i] === b)) throw unsupported('a body without the k8s protobuf envelope');
  try {
    const unknown = fields(body.subarray(4));
    const typeMeta = fields((unknown.get(1)?.[0] as Uint8Array | undefined) ?? new Uint8Array());
    const [apiVersion, kind] = [text(typeMeta.get(1)?.[0]), text(typeMeta.get(2)?.[0])];
    if (apiVersion !== 'v1' || kind !== 'Namespace') throw unsupported(`${apiVersion ?? '?'}/${kind ?? '?'}`);
    const raw = fields((unknown.get(2)?.[0] as Uint8Array | undefined) ?? new Uint8Array());
    const meta = raw.get(1)?.[0];
    return { apiVersion, kind, metadata: meta instanceof Uint8Array ? objectMeta(meta) : {} };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(400, 'BadRequest', `the protobuf request body could not be decoded: ${(err as Error).message}`);
  }
}
