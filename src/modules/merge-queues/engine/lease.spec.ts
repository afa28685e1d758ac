import { fenceRef, LeaseLost, renewEveryMs } from './lease';

describe('merge-queue lease', () => {
  it('is renewed every third of its length, so that two renewals may fail before it expires', () => {
    expect(renewEveryMs(15_000)).toBe(5_000);
    expect(renewEveryMs(1_200)).toBe(400);
    expect(renewEveryMs(300)).toBe(100);
    expect(renewEveryMs(90)).toBe(50);
  });

  it('names the fence ref after the queue, outside the candidate refs CI watches (refs/heads/mq/...)', () => {
    expect(fenceRef('q1')).toBe('refs/heads/mq-fence/q1');
    expect(fenceRef('q1').startsWith('refs/heads/mq/')).toBe(false);
  });

  it('LeaseLost names the holder, the queue, the epoch and why', () => {
    const error = new LeaseLost({ queueId: 'q1', holder: 'h1', epoch: 7n }, 'the queue is at epoch 8');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('LeaseLost');
    expect(error.message).toBe('merge-queue executor h1 lost its lease on queue q1 (epoch 7): the queue is at epoch 8');
  });
});
