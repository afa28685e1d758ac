import { IsInt, IsOptional, IsString, MaxLength, MetadataStorage, validate } from 'class-validator';
import { cacheValidationMetadata } from './validation-metadata-cache';

/** The rules of a class as a comparable list, whatever array instances hold them. */
const rules = (storage: MetadataStorage, target: new () => unknown, groups?: string[]) =>
  storage
    .getTargetValidationMetadatas(target, '', false, false, groups)
    .map((m) => `${m.propertyName}:${m.type}:${m.name ?? ''}:${(m.groups ?? []).join('|')}`)
    .sort();

describe(cacheValidationMetadata.name, () => {
  it('gives a class its own and its ancestors\u2019 rules, as class-validator works them out, also for a class registered after the first lookup', async () => {
    class Base {
      @IsString()
      name!: string;
    }
    class Child extends Base {
      @IsInt()
      @IsOptional()
      size?: number;
    }

    const real = new MetadataStorage();
    const cached = new MetadataStorage();
    cacheValidationMetadata(cached);
    cacheValidationMetadata(cached); // idempotent: a second ValidationPipe does not wrap twice
    // Copy the global registrations of Base and Child into both storages, as decorators would.
    const global = (await import('class-validator')).getMetadataStorage();
    for (const target of [Base, Child]) {
      for (const metadata of global.getTargetValidationMetadatas(target, '', true, false).filter((m) => m.target === target)) {
        real.addValidationMetadata(metadata);
        cached.addValidationMetadata(metadata);
      }
    }

    expect(rules(cached, Child)).toEqual(rules(real, Child));
    expect(rules(cached, Child)).toHaveLength(3);
    expect(cached.getTargetValidationMetadatas(Child, '', false, false)).toBe(cached.getTargetValidationMetadatas(Child, '', false, false));
    expect(rules(cached, Base)).toEqual(rules(real, Base));
    expect(rules(cached, Child, ['admin'])).toEqual(rules(real, Child, ['admin']));

    // A rule registered later (a module loaded after the first request) is seen at once.
    class Late extends Child {
      @MaxLength(3)
      code!: string;
    }
    const lateRules = global.getTargetValidationMetadatas(Late, '', true, false).filter((m) => m.target === Late);
    expect(rules(cached, Late)).toEqual(rules(real, Late));
    for (const metadata of lateRules) {
      real.addValidationMetadata(metadata);
      cached.addValidationMetadata(metadata);
    }
    expect(rules(cached, Late)).toEqual(rules(real, Late));
    expect(rules(cached, Late)).toHaveLength(4);
    const grouped = cached.groupByPropertyName(cached.getTargetValidationMetadatas(Late, '', false, false));
    expect(Object.keys(grouped).sort()).toEqual(['code', 'name', 'size']);
  });

  it('keeps validation on the global storage working: inherited rules apply and unknown fields are refused', async () => {
    cacheValidationMetadata();
    class Parent {
      @IsString()
      title!: string;
    }
    class Kid extends Parent {
      @IsInt()
      count!: number;
    }
    const bad = Object.assign(new Kid(), { title: 1, count: 'x', extra: true });
    for (let round = 0; round < 2; round++) {
      const errors = await validate(bad, { whitelist: true, forbidNonWhitelisted: true });
      expect(errors.map((e) => e.property).sort()).toEqual(['count', 'extra', 'title']);
    }
    const good = Object.assign(new Kid(), { title: 'a', count: 1 });
    await expect(validate(good, { whitelist: true, forbidNonWhitelisted: true })).resolves.toEqual([]);
  });
});
