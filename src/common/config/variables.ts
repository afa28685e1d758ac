import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, validateSync } from 'class-validator';

export class ConfigError extends Error {}

/** One environment variable: its validation, its value with the default applied, and its documentation. */
export interface Variable<T> {
  /** Its line in the configuration table (docs/configuration.md). */
  readonly doc: string;
  /** The table's Default and Allowed columns. */
  readonly shownDefault: string;
  readonly allowed: string;
  /** Its value in .env.example, and the comment written above it there, if any. */
  readonly example: string;
  readonly comment?: string;
  /** class-validator's decorators, in the order they would be written on a property. */
  readonly decorators: readonly PropertyDecorator[];
  /** The validated value (undefined when unset) with the default applied. */
  read(value: unknown): T;
}

export type Variables = Readonly<Record<string, Variable<unknown>>>;

/** The values a set of variables reads as, each typed by its declaration. */
export type Values<V> = { readonly [K in keyof V]: V[K] extends Variable<infer T> ? T : never };

/** What every declaration says besides its type and bounds. */
interface Described {
  doc: string;
  /** The table's Default column when the default is not a value of its own (another variable's, a sentence). */
  shown?: string;
  /** .env.example's value when it is not the default. */
  example?: string;
  comment?: string;
}

function variable<T>(
  decorators: PropertyDecorator[],
  allowed: string,
  defaultValue: T | undefined,
  options: Described,
  read: (value: unknown) => T,
): Variable<T> {
  const given = defaultValue === undefined ? undefined : String(defaultValue);
  return {
    doc: options.doc,
    shownDefault: options.shown ?? (given === undefined ? '(unset)' : `\`${given}\``),
    allowed,
    example: options.example ?? given ?? '',
    comment: options.comment,
    decorators,
    read,
  };
}

/** A whole number in [min, max]. */
export function int<D extends number | undefined = undefined>(options: Described & { min: number; max: number; default?: D }): Variable<number | D> {
  const { min, max } = options;
  const decorators = [IsOptional(), Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value))), IsInt(), Min(min), Max(max)];
  return variable(decorators, `${min}–${max}`, options.default, options, (value) => (value as number | undefined) ?? (options.default as D));
}

/** `true` or `false`. */
export function flag<D extends boolean | undefined = undefined>(options: Described & { default?: D }): Variable<boolean | D> {
  return variable([IsOptional(), IsIn(['true', 'false'])], '`true`, `false`', options.default, options, (value) =>
    value === undefined ? (options.default as D) : value === 'true',
  );
}

/** One of a few words. */
export function oneOf<const W extends readonly string[]>(words: W, options: Described & { default: W[number] }): Variable<W[number]> {
  const allowed = words.map((word) => `\`${word}\``).join(', ');
  return variable([IsOptional(), IsIn(words)], allowed, options.default, options, (value) => (value as W[number] | undefined) ?? options.default);
}

/** A string matching `regex`; `message` ("must be ...") completes "NAME ..." when it does not. Required, defaulted, or optional. */
export function pattern(regex: RegExp, message: string, options: Described & { required: true }): Variable<string>;
export function pattern(regex: RegExp, message: string, options: Described & { default: string }): Variable<string>;
export function pattern(regex: RegExp, message: string, options: Described): Variable<string | undefined>;
export function pattern(regex: RegExp, message: string, options: Described & { required?: true; default?: string }): Variable<string | undefined> {
  const matches = Matches(regex, { message });
  const decorators = options.required ? [matches] : [IsOptional(), matches];
  return variable(decorators, message.replace(/^must be /, ''), options.default, { shown: options.required ? '(required)' : undefined, ...options }, (value) =>
    value === undefined ? options.default : (value as string),
  );
}

/** Any string, checked by whoever reads it; `allowed` says what it must be. */
export function text(options: Described & { allowed: string }): Variable<string | undefined> {
  return variable([IsOptional(), IsString()], options.allowed, undefined, options, (value) => value as string | undefined);
}

/** One feature's variables (in the order they are documented) and the part of AppConfig read from them. */
export interface Feature<V extends Variables = Variables, C = unknown> {
  /** Its heading in docs/configuration.md and .env.example. */
  readonly title: string;
  readonly variables: V;
  build(values: Values<V>): C;
}

export function feature<V extends Variables, C>(title: string, variables: V, build: (values: Values<V>) => C): Feature<V, C> {
  return { title, variables, build };
}

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every variable of some features together. */
export type VariablesOf<F extends readonly Feature[]> = Intersection<F[number]['variables']>;

/**
 * The features' variables as one class-validator class. `read` validates an environment once and
 * returns every variable's value; it throws a ConfigError with one line per bad variable, naming it.
 * A variable declared by two features is refused here.
 */
export function environment<const F extends readonly Feature[]>(features: F): { read(env: NodeJS.ProcessEnv): Values<VariablesOf<F>> } {
  class Environment {}
  const variables: Record<string, Variable<unknown>> = {};
  for (const { variables: declared } of features)
    for (const [name, declaration] of Object.entries(declared)) {
      if (name in variables) throw new Error(`${name} is declared twice`);
      variables[name] = declaration;
      // Decorators written on a property apply bottom up.
      for (const decorator of [...declaration.decorators].reverse()) decorator(Environment.prototype, name);
    }
  return {
    read(env) {
      // An empty value is an unset one (`X=` in an env file, `\${X:-}` in compose): the default applies.
      const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
      const raw = plainToInstance(Environment, given, { enableImplicitConversion: false }) as Record<string, unknown>;
      const errors = validateSync(raw, { skipMissingProperties: false, whitelist: false });
      if (errors.length > 0) {
        const lines = errors.map((e) => {
          const value = env[e.property];
          const why = value === undefined || value === '' ? 'is not set' : Object.values(e.constraints ?? {})[0]?.replace(`${e.property} `, '');
          return `Invalid configuration: ${e.property} ${why}`;
        });
        throw new ConfigError(lines.join('\n'));
      }
      return Object.fromEntries(Object.entries(variables).map(([name, declaration]) => [name, declaration.read(raw[name])])) as Values<VariablesOf<F>>;
    },
  };
}
