import { batchRowId } from './ids';

describe(batchRowId.name, () => {
  it('derives stable, UUID-shaped batch row ids', () => {
    expect(batchRowId('q1', 'b1')).toBe(batchRowId('q1', 'b1'));
    expect(batchRowId('q1', 'b1')).not.toBe(batchRowId('q2', 'b1'));
    expect(batchRowId('q1', 'b1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
