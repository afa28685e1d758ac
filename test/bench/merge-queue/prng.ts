/**
 * Seeded randomness for the simulator. Written here rather than taken from a library because the
 * benchmark needs keyed draws (the same candidate gets the same CI duration under every policy),
 * which is a hash of the key, not a stream.
 */

/** mulberry32: a small, fast 32-bit generator; returns uniforms in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** lowbias32 finaliser: a full-avalanche 32-bit mixer. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** A 32-bit hash of a list of integers; equal keys give equal hashes, near keys unrelated ones. */
export function hashInts(values: readonly number[]): number {
  let h = 0x811c9dc5;
  for (const v of values) h = mix32((h + 0x9e3779b9 + mix32(v | 0)) | 0);
  return mix32((h ^ values.length) >>> 0);
}

/** A uniform in [0, 1) determined by the key alone. */
export function keyedUniform(values: readonly number[]): number {
  return hashInts(values) / 4294967296;
}

/** Standard normal by Box-Muller from two uniforms. */
export function boxMuller(u1: number, u2: number): number {
  const r = Math.sqrt(-2 * Math.log(Math.max(u1, 1e-12)));
  return r * Math.cos(2 * Math.PI * u2);
}

/** Lognormal with the given median and sigma, from a standard normal draw. */
export function lognormal(median: number, sigma: number, z: number): number {
  return median * Math.exp(sigma * z);
}

/** Exponential with the given rate, from a uniform. */
export function exponential(rate: number, u: number): number {
  return -Math.log(1 - u) / rate;
}
