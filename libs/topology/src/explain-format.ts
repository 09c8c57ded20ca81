// Small text helpers shared by the "why" strings, so every reason reads the same way.

/** `a, b, c and 4 more` (names sorted, at most `max` shown). */
export function nameList(names: readonly string[], max = 3): string {
  const sorted = [...names].sort();
  const shown = sorted.slice(0, max).join(', ');
  return sorted.length > max ? `${shown} and ${sorted.length - max} more` : shown;
}

/** `1 endpoint` / `3 endpoints`. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** 0.45 -> `45%`, 1/3 -> `33.33%`. */
export function percent(ratio: number): string {
  return `${Number((ratio * 100).toFixed(2))}%`;
}

/** 3.5 -> `3.5`, 10/3 -> `3.33`. */
export function decimal(n: number): string {
  return `${Number(n.toFixed(2))}`;
}
