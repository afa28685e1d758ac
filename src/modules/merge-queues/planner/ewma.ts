/** Exponentially weighted moving average: moves `alpha` of the way from `previous` to `observation`. */
export function ewma(previous: number, alpha: number, observation: number): number {
  return previous + alpha * (observation - previous);
}
