// A cheap check for the common pod IP shape (internal, not exported from the package).

/**
 * True for a dotted quad without leading zeros, which is already canonical text: the full IP
 * parser (and the object it returns) can be skipped for it, which matters at 100k pods.
 */
export function isCanonicalV4(s: string): boolean {
  let dots = 0;
  let digits = 0;
  let val = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0) return false;
      dots++;
      digits = 0;
      val = 0;
      continue;
    }
    if (c < 48 || c > 57 || (digits === 1 && val === 0)) return false;
    val = val * 10 + (c - 48);
    digits++;
    if (val > 255) return false;
  }
  return dots === 3 && digits > 0;
}
