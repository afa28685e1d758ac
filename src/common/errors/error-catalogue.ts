/**
 * The error catalogue: every code the API can return, with its HTTP status and default message.
 * Each domain declares its own codes beside its code (`<domain>.errors.ts`, through `defineErrors`);
 * they all land in one registry, which the OpenAPI document lists as `x-error-catalogue`. A code
 * has the shape `<service>:<Domain>:<CODE>`, and the name a service throws is the CODE part:
 * `ProjectErrors.NOT_FOUND` renders `dpa:Project:NOT_FOUND`.
 */
export const SERVICE = 'dpa';

export interface ErrorEntry {
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

const CODE_SHAPE = /^[a-z]+:[A-Z][A-Za-z]+:[A-Z][A-Z0-9_]*$/;
const registry = new Map<string, ErrorEntry>();

/** Declares a domain's error codes: `defineErrors('Project', { NOT_FOUND: [404, 'The project does not exist.'] })`. */
export function defineErrors<const T extends Record<string, readonly [number, string]>>(domain: string, entries: T): { readonly [K in keyof T]: ErrorEntry } {
  const out: Record<string, ErrorEntry> = {};
  for (const [name, [status, message]] of Object.entries(entries)) {
    const entry: ErrorEntry = Object.freeze({ code: `${SERVICE}:${domain}:${name}`, status, message });
    if (!CODE_SHAPE.test(entry.code)) throw new Error(`error code ${entry.code} is not of the shape <service>:<Domain>:<CODE>`);
    if (status < 400 || status > 599) throw new Error(`error code ${entry.code} has status ${status}, not an error status`);
    const existing = registry.get(entry.code);
    // A module evaluated twice (e.g. two Jest module registries) declares the same entries again.
    if (existing && (existing.status !== status || existing.message !== message)) throw new Error(`error code ${entry.code} is declared twice`);
    registry.set(entry.code, existing ?? entry);
    out[name] = existing ?? entry;
  }
  return out as { readonly [K in keyof T]: ErrorEntry };
}

/** Every declared entry, in declaration order. Complete once the application's modules are imported. */
export function errorCatalogue(): ErrorEntry[] {
  return [...registry.values()];
}
