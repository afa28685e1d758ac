import { AppError } from '@/common/errors/app-error';
import { CreateProjectRequest, UpdateProjectRequest } from '@/modules/projects/dto/project.dto';
import { createValidationPipe } from './validation';

async function problem(metatype: new () => unknown, body: unknown): Promise<{ message: string; items: string[] }> {
  try {
    await createValidationPipe().transform(body, { type: 'body', metatype });
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { message: error.message, items: error.options.details?.[0]?.items ?? [] };
  }
  throw new Error('expected a validation error');
}

describe(createValidationPipe.name, () => {
  it('says "must not be null" for null in a field that cannot hold it, on create and on update', async () => {
    expect((await problem(CreateProjectRequest, { data: { name: null } })).items).toEqual(['data.name: must not be null']);
    expect((await problem(CreateProjectRequest, { data: { name: 'x', givenId: null } })).items).toEqual(['data.givenId: must not be null']);
    expect((await problem(UpdateProjectRequest, { data: { name: null, status: null } })).items.sort()).toEqual([
      'data.name: must not be null',
      'data.status: must not be null',
    ]);
  });

  it('lets null through where the field is nullable', async () => {
    await expect(createValidationPipe().transform({ data: { description: null } }, { type: 'body', metatype: UpdateProjectRequest })).resolves.toMatchObject({
      data: { description: null },
    });
  });

  it('names unknown keys whatever characters they hold, within a bounded message', async () => {
    const { message, items } = await problem(CreateProjectRequest, { data: { name: 'x', 'a(': 1, 'b c': 2, ['k'.repeat(100_000)]: 3 } });
    expect(items.slice(0, 2)).toEqual(['data.a(: is not an accepted field', 'data.b c: is not an accepted field']);
    expect(message.length).toBeLessThan(2_000);
    expect(items.every((item) => item.length < 400)).toBe(true);
  });
});
