import { sharedRead } from './shared-read';

describe(sharedRead.name, () => {
  it('runs the read once for callers that come while it is in flight, and reuses its value for the period after it settles', async () => {
    let clock = 1_000;
    let reads = 0;
    let release: (value: number) => void = () => undefined;
    const read = sharedRead(
      5_000,
      () => {
        reads++;
        return new Promise<number>((resolve) => (release = resolve));
      },
      () => clock,
    );
    const together = Array.from({ length: 50 }, () => read());
    await Promise.resolve();
    release(42);
    expect(await Promise.all(together)).toEqual(Array(50).fill(42));
    expect(reads).toBe(1);
    clock += 4_999;
    expect(await read()).toBe(42);
    expect(reads).toBe(1);
    clock += 1;
    const next = read();
    await Promise.resolve();
    release(43);
    expect(await next).toBe(43);
    expect(reads).toBe(2);
  });

  it('shares and reuses a failure the same way (a storm during an outage does not retry it)', async () => {
    let clock = 0;
    let reads = 0;
    const read = sharedRead(
      1_000,
      async () => {
        reads++;
        throw new Error('down');
      },
      () => clock,
    );
    await expect(Promise.all([read(), read(), read()])).rejects.toThrow('down');
    await expect(read()).rejects.toThrow('down');
    expect(reads).toBe(1);
    clock = 1_000;
    await expect(read()).rejects.toThrow('down');
    expect(reads).toBe(2);
  });

  it('with a period of 0, still shares a read in flight', async () => {
    let reads = 0;
    const read = sharedRead(0, async () => ++reads);
    expect(await Promise.all([read(), read()])).toEqual([1, 1]);
    expect(await read()).toBe(2);
  });
});
