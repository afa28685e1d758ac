import { PageSlots } from './page-slots';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PageSlots', () => {
  it('runs at most `size` pieces of work at once, the others in turn as slots free', async () => {
    const slots = new PageSlots(2);
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const work = () =>
      slots.with(async () => {
        most = Math.max(most, ++running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
      });
    const all = Promise.all([work(), work(), work(), work(), work()]);
    for (let i = 0; i < 5; i++) {
      await tick();
      expect(running).toBeLessThanOrEqual(2);
      releases.shift()?.();
    }
    await all;
    expect(most).toBe(2);
  });

  it('frees the slot when the work fails', async () => {
    const slots = new PageSlots(1);
    await expect(slots.with(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.with(() => Promise.resolve(7))).resolves.toBe(7);
  });

  it('stops waiting when the signal aborts, with its reason, and never runs that work', async () => {
    const slots = new PageSlots(1);
    let release = () => undefined as void;
    const holding = slots.with(() => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    let ran = false;
    const waiting = slots.with(async () => {
      ran = true;
    }, controller.signal);
    controller.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    release();
    await holding;
    expect(ran).toBe(false);
    // The slot is free again for the next comer (the aborted waiter took none).
    await expect(slots.with(() => Promise.resolve('next'))).resolves.toBe('next');
    await expect(slots.with(() => Promise.resolve(1), controller.signal)).rejects.toThrow('deadline');
  });
});
