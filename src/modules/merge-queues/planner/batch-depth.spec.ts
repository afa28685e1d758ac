import { batchDepthFor, nextBatchSize } from './batch-depth';
import { mayExtendChain } from './chain';
import { DEFAULT_PLANNER_CONFIG } from './config';
import { ewma } from './ewma';

describe(batchDepthFor.name, () => {
  const config = { ...DEFAULT_PLANNER_CONFIG, minBatch: 1, maxBatch: 16, targetBatchSuccess: 0.6 };

  it('shrinks as the observed failure rate rises and stays within [minBatch, maxBatch]', () => {
    expect(batchDepthFor(0.001, config)).toBe(16);
    expect(batchDepthFor(0.03, config)).toBe(16);
    expect(batchDepthFor(0.08, config)).toBe(6);
    expect(batchDepthFor(0.3, config)).toBe(1);
    expect(batchDepthFor(0.9, { ...config, minBatch: 2 })).toBe(2);
  });

  it('is monotone in the failure rate', () => {
    let previous = Infinity;
    for (let q = 0; q <= 1; q += 0.01) {
      const depth = batchDepthFor(q, config);
      expect(depth).toBeLessThanOrEqual(previous);
      previous = depth;
    }
  });
});

describe(nextBatchSize.name, () => {
  it('spreads a short queue over free runners and caps a long one at the depth', () => {
    expect(nextBatchSize(0, 4, 8, 1)).toBe(0);
    expect(nextBatchSize(3, 4, 8, 1)).toBe(1);
    expect(nextBatchSize(12, 3, 8, 1)).toBe(4);
    expect(nextBatchSize(100, 1, 8, 1)).toBe(8);
  });
});

describe(mayExtendChain.name, () => {
  it('stops speculating once the chain is unlikely to land', () => {
    const config = { ...DEFAULT_PLANNER_CONFIG, minChainSuccess: 0.3 };
    expect(mayExtendChain(0, 0.9, config)).toBe(true);
    expect(mayExtendChain(3, 0.1, config)).toBe(true);
    expect(mayExtendChain(2, 0.5, config)).toBe(false);
  });
});

describe(ewma.name, () => {
  it('moves towards the observation by alpha', () => {
    expect(ewma(0.5, 0.1, 1)).toBeCloseTo(0.55);
    expect(ewma(0.5, 0.1, 0)).toBeCloseTo(0.45);
  });
});
