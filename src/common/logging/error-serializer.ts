/**
 * pino's `err` serializer without writing to the error. pino-std-serializers' own tags every error
 * it walks with a symbol (its cycle check), which throws on a frozen or non-extensible error, or on
 * a frozen error-like property of one (a catalogue entry has a string `message`): the logger then
 * threw while logging a failure, and the failure became a 500 (issue 41). This one keeps the same
 * output (type, message and stack with their causes, aggregateErrors, the other enumerable
 * properties) and tracks what it has seen in a WeakSet instead.
 */

interface ErrorLike {
  message: string;
  stack?: unknown;
  name?: unknown;
  cause?: unknown;
  errors?: unknown;
}

export interface SerializedError {
  type: unknown;
  message: string;
  stack: string;
  aggregateErrors?: SerializedError[];
  [key: string]: unknown;
}

/** How many causes deep message and stack are followed. */
const MAX_CAUSES = 20;

function isErrorLike(value: unknown): value is ErrorLike {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}

/** The error's cause when it is error-like (a VError-style cause function is called). */
function causeOf(error: ErrorLike): ErrorLike | undefined {
  let cause: unknown;
  try {
    cause = typeof error.cause === 'function' ? (error.cause as () => unknown)() : error.cause;
  } catch {
    return undefined;
  }
  return isErrorLike(cause) ? cause : undefined;
}

/** "message: cause's message: ..." as pino-std-serializers writes it (a VError-style cause function adds none of its own). */
function messageWithCauses(error: ErrorLike, seen = new Set<ErrorLike>(), skip = false): string {
  const message = skip ? '' : error.message || '';
  if (seen.has(error) || seen.size > MAX_CAUSES) return `${message}: ...`;
  const cause = causeOf(error);
  if (!cause) return message;
  seen.add(error);
  const vErrorStyle = typeof error.cause === 'function';
  return `${message}${vErrorStyle ? '' : ': '}${messageWithCauses(cause, seen, vErrorStyle)}`;
}

/** The stack, then "caused by: <the cause's stack>" for each cause, as pino-std-serializers writes it. */
function stackWithCauses(error: ErrorLike, seen = new Set<ErrorLike>()): string {
  const stack = typeof error.stack === 'string' ? error.stack : '';
  if (seen.has(error) || seen.size > MAX_CAUSES) return `${stack}\ncauses have become circular...`;
  const cause = causeOf(error);
  if (!cause) return stack;
  seen.add(error);
  return `${stack}\ncaused by: ${stackWithCauses(cause, seen)}`;
}

function typeOf(error: ErrorLike): unknown {
  const constructor = (error as { constructor?: unknown }).constructor;
  return typeof constructor === 'function' ? (constructor as { name: string }).name : error.name;
}

function serialize(error: ErrorLike, seen: WeakSet<object>): SerializedError {
  seen.add(error);
  const out: SerializedError = { type: typeOf(error), message: messageWithCauses(error), stack: stackWithCauses(error) };
  if (Array.isArray(error.errors))
    out.aggregateErrors = error.errors.map((inner: unknown) => (isErrorLike(inner) && !seen.has(inner) ? serialize(inner, seen) : inner) as SerializedError);
  for (const key in error) {
    if (key in out) continue;
    let value: unknown;
    try {
      value = (error as unknown as Record<string, unknown>)[key];
    } catch {
      continue;
    }
    if (isErrorLike(value)) {
      // Causes are in message and stack already; an error seen on the way down is not walked again.
      if (key !== 'cause' && !seen.has(value)) out[key] = serialize(value, seen);
    } else {
      out[key] = value;
    }
  }
  Object.defineProperty(out, 'raw', { value: error, enumerable: false });
  return out;
}

/** pino's `err` serializer: anything error-like becomes a plain object; anything else is returned as it is. Never throws, never writes to `value`. */
export function serializeError(value: unknown): unknown {
  if (!isErrorLike(value)) return value;
  try {
    return serialize(value, new WeakSet());
  } catch (failure) {
    // A getter that throws, a proxy: the line still goes out with what can be read.
    return { type: 'Error', message: String(value.message), stack: '', serializerFailure: String(failure) };
  }
}
