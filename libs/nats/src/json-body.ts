// A message body parsed as JSON, with a reason fit for a dead letter or a log line when it is
// not JSON. JSON.parse's own messages quote the raw input — control characters and all — and
// differ between engines, so a hostile body could put anything into the DLQ's reason; this one
// names the position and the rule, on one printable ASCII line.

import { locateJsonError } from '@slicemesh/model';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export type ParsedBody = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/**
 * Decodes `bytes` as UTF-8 (a leading byte-order mark is dropped, as TextDecoder does) and parses
 * the text as JSON.
 *
 * ### Examples
 * ```ts
 * parseJsonBody(new TextEncoder().encode('{"a":1}'));  // { ok: true, value: { a: 1 } }
 * parseJsonBody(new TextEncoder().encode('{"a":'));    // { ok: false, reason: 'invalid JSON at line 1 column 6: unexpected end of input' }
 * ```
 */
export function parseJsonBody(bytes: Uint8Array): ParsedBody {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, reason: 'invalid UTF-8' };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    const p = locateJsonError(text);
    if (p !== null) return { ok: false, reason: `invalid JSON at line ${p.line} column ${p.column}: ${p.reason}` };
    // Syntactically fine yet refused: only the engine's limits (nesting) are left.
    return { ok: false, reason: err instanceof RangeError ? 'invalid JSON: nested too deeply' : 'invalid JSON' };
  }
}
