import { describe, expect, it } from 'vitest';
import { decodeProtobufBody } from './protobuf.ts';

// A minimal encoder for the test inputs: length-delimited fields only.
function field(n: number, value: Uint8Array | string): number[] {
  const bytes = typeof value === 'string' ? [...new TextEncoder().encode(value)] : [...value];
  return [(n << 3) | 2, bytes.length, ...bytes];
}
const msg = (...parts: number[][]) => new Uint8Array(parts.flat());

function envelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  return new Uint8Array([0x6b, 0x38, 0x73, 0x00, ...field(1, msg(field(1, apiVersion), field(2, kind))), ...field(2, raw)]);
}

describe('decodeProtobufBody', () => {
  it('reads a Namespace with name and labels (what kubectl create namespace sends)', () => {
    const meta = msg(field(1, 'demo'), field(11, msg(field(1, 'team'), field(2, 'x'))));
    expect(decodeProtobufBody(envelope('v1', 'Namespace', msg(field(1, meta))))).toEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo', labels: { team: 'x' } } });
  });

  it('answers 415 for other kinds and for bodies without the envelope', () => {
    expect(() => decodeProtobufBody(envelope('v1', 'Service', msg()))).toThrow('decodes protobuf only for Namespaces (got v1/Service)');
    expect(() => decodeProtobufBody(new Uint8Array([1, 2, 3]))).toThrow('without the k8s protobuf envelope');
  });

  it('answers 400 for a truncated message', () => {
    expect(() => decodeProtobufBody(new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x10, 0x01]))).toThrow('could not be decoded');
  });
});
