/** Rows per multi-row statement: large enough for throughput, small enough for parameter limits. */
export const WRITE_BATCH_SIZE = 500;

/** Splits `items` into consecutive slices of at most `size`; [] for []. */
export function chunks<T>(items: readonly T[], size: number = WRITE_BATCH_SIZE): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
