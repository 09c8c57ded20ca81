// Kubernetes resource quantities ("4", "3500m", "0.5", "1e3", "2Ki") as whole millicores.
// Exact arithmetic (BigInt) so that "0.1" + "0.2" cores add up to 300m, not 300.00000000000006.

const QUANTITY = /^([+-]?)(\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

const DECIMAL_SUFFIX: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** Exponents beyond this are not CPU amounts; treating them as unparseable keeps BigInt small. */
const MAX_EXPONENT = 40;

/**
 * Parses a quantity into millicores, rounding a fraction of a millicore up (as Kubernetes'
 * `MilliValue` does). Returns `null` for text that is not a quantity and for negative values
 * (allocatable CPU cannot be negative; callers treat `null` like a missing value).
 *
 * ### Examples
 * parseCpuMillis('4')     // 4000
 * parseCpuMillis('3500m') // 3500
 * parseCpuMillis('0.5')   // 500
 * parseCpuMillis('100u')  // 1 (rounded up)
 */
export function parseCpuMillis(text: string): number | null {
  const m = QUANTITY.exec(text.trim());
  if (m === null) return null;
  const [, sign, number = '0', exponent, suffix] = m;
  const [intPart = '', fracPart = ''] = number.split('.');
  const mantissa = BigInt(`${intPart}${fracPart}` || '0');
  if (mantissa === 0n) return 0;
  if (sign === '-') return null;

  const scale = exponent !== undefined ? Number(exponent) : suffix !== undefined ? (DECIMAL_SUFFIX[suffix] ?? 0) : 0;
  if (Math.abs(scale) > MAX_EXPONENT) return null;
  const power = scale + 3 - fracPart.length; // to millis, undoing the decimal point
  let num = mantissa * (suffix !== undefined && BINARY_SUFFIX[suffix] !== undefined ? 2n ** BigInt(BINARY_SUFFIX[suffix]) : 1n);
  let den = 1n;
  if (power >= 0) num *= 10n ** BigInt(power);
  else den = 10n ** BigInt(-power);
  return Number((num + den - 1n) / den);
}
