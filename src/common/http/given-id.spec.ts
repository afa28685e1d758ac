import { GIVEN_ID_PATTERN, slugify } from './given-id';

describe(slugify.name, () => {
  it.each([
    ['My API (v2)', 'my-api-v2'],
    ['  Ünïcödé   Service  ', 'unicode-service'],
    ['---', 'item'],
    ['a'.repeat(100), 'a'.repeat(56)],
  ])('%p -> %p', (name, slug) => {
    expect(slugify(name)).toBe(slug);
    expect(GIVEN_ID_PATTERN.test(slugify(name))).toBe(true);
  });
});
