/** Small order statistics; inputs are plain millisecond samples. */
export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export interface Summary {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
}

export function summarize(xs: readonly number[]): Summary {
  return {
    n: xs.length,
    median: round(median(xs)),
    p90: round(quantile(xs, 0.9)),
    min: round(Math.min(...xs)),
    max: round(Math.max(...xs)),
  };
}

/** A duration for the table: whole milliseconds, a tenth below 10. */
export function ms(x: number): string {
  return `${round(x, x < 10 ? 1 : 0)} ms`;
}
