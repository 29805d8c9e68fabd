/** Small statistics shared by the benchmarks that alternate two sides. */

export function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

/** The standard error of the mean of `values` (sample variance, n − 1). */
export function standardError(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  const m = mean(values);
  const variance = values.reduce((a, v) => a + (v - m) ** 2, 0) / (n - 1);
  return Math.sqrt(variance / n);
}

/**
 * "± 0.012 (standard error; rounds 0.87–1.07)": how far the mean of the rounds' ratios may
 * lie from the true one.
 */
export function spread(ratios: readonly number[]): string {
  const range = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
  return `± ${standardError(ratios).toFixed(3)} (standard error; rounds ${range})`;
}
