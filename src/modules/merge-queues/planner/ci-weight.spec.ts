import {
  type CiDurationModel,
  expectedCiMs,
  expectedRemainingMs,
  heavyThresholdMs,
  normalCdf,
  observeLandedWeight,
  observePassingRun,
  posteriorAfterRun,
  runHeavyProbability,
} from './ci-weight';

const MIN = 60_000;
const model: CiDurationModel = { lightCiMs: 20 * MIN, heavyCiMs: 60 * MIN, heavyRate: 0.1 };

describe('CI weight model', () => {
  it('a run is heavy when any PR it holds is: probabilities combine as independent PRs', () => {
    expect(runHeavyProbability([], model)).toBe(0);
    expect(runHeavyProbability([null], model)).toBeCloseTo(0.1);
    expect(runHeavyProbability([null, null], model)).toBeCloseTo(1 - 0.81);
    expect(runHeavyProbability([0.02, 1], model)).toBe(1);
  });

  it('expected duration mixes light and heavy, and grows with every unknown PR held', () => {
    expect(expectedCiMs([], model)).toBe(20 * MIN);
    expect(expectedCiMs([1], model)).toBe(60 * MIN);
    const one = expectedCiMs([null], model);
    const five = expectedCiMs([null, null, null, null, null], model);
    expect(one).toBeCloseTo(24 * MIN);
    expect(five).toBeGreaterThan(one);
    expect(five).toBeLessThan(60 * MIN);
  });

  it('a light run makes every PR it held less likely heavy', () => {
    const after = posteriorAfterRun([null, 0.5], false, model);
    expect(after[0]).toBeLessThan(0.1);
    expect(after[1]).toBeLessThan(0.5);
  });

  it('a heavy run of one unknown PR makes it nearly certainly heavy', () => {
    const [p] = posteriorAfterRun([null], true, model);
    expect(p).toBeGreaterThan(0.45);
    const [again] = posteriorAfterRun([p], true, model);
    expect(again).toBeGreaterThan(0.85);
  });

  it('a heavy run spreads suspicion over many unknown PRs, and a known heavy PR explains it away', () => {
    const spread = posteriorAfterRun(Array<null>(10).fill(null), true, model);
    expect(spread[0]).toBeGreaterThan(0.1);
    expect(spread[0]).toBeLessThan(0.2);
    const explained = posteriorAfterRun([0.99, null], true, model);
    expect(explained[0]).toBeGreaterThan(0.99);
    expect(explained[1]).toBeCloseTo(0.1, 2);
  });

  it('classifies passing runs by the threshold and learns each mean from its own class', () => {
    expect(heavyThresholdMs(model, 1.75)).toBe(35 * MIN);
    const light = observePassingRun(model, 30 * MIN, 1.75);
    expect(light.heavy).toBe(false);
    expect(light.model.lightCiMs).toBeCloseTo(21 * MIN);
    expect(light.model.heavyCiMs).toBe(60 * MIN);
    const heavy = observePassingRun(model, 80 * MIN, 1.75);
    expect(heavy.heavy).toBe(true);
    expect(heavy.model.heavyCiMs).toBeCloseTo(62 * MIN);
    expect(heavy.model.lightCiMs).toBe(20 * MIN);
  });

  it('learns the prior only from PRs some run told something about', () => {
    expect(observeLandedWeight(model, null)).toBe(model);
    expect(observeLandedWeight(model, 1).heavyRate).toBeCloseTo(0.145);
    expect(observeLandedWeight(model, 0).heavyRate).toBeCloseTo(0.095);
  });

  it('a run still going long after a light one would have ended is expected to run as a heavy one', () => {
    const fresh = expectedRemainingMs(0, 0, [null], model);
    expect(fresh).toBeCloseTo(expectedCiMs([null], model), -3);
    // 40 min in: a light run (mean 20) has almost surely ended, so most of a heavy run (mean 60) remains
    const late = expectedRemainingMs(40 * MIN, 0, [null], model);
    expect(late).toBeGreaterThan(20 * MIN);
    expect(late).toBeLessThan(40 * MIN);
    // a known-light run past its mean has only a short tail left
    expect(expectedRemainingMs(25 * MIN, 0, [0], model)).toBeLessThan(15 * MIN);
    expect(expectedRemainingMs(25 * MIN, 0, [0], model)).toBeGreaterThan(0);
  });

  it('normalCdf matches known values', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 6);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 5);
    expect(normalCdf(-1)).toBeCloseTo(0.158655, 5);
  });
});
