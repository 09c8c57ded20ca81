// Structural equality for plain JSON-shaped data (Kubernetes objects, our own records).
// Arrays compare in order (reordering is a change, as upstream's whole-object comparison);
// object keys compare as sets, and a key holding `undefined` equals a missing key.

/** True when `a` and `b` hold the same plain data. Maps are compared entry by entry. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k))) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of Object.keys(ao)) if (!deepEqual(ao[k], bo[k])) return false;
  for (const k of Object.keys(bo)) if (!(k in ao) && bo[k] !== undefined) return false;
  return true;
}
