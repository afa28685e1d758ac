import type { INestApplication } from '@nestjs/common';
import { RequestMethod } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IS_PUBLIC } from '@/common/auth/auth.decorators';

export interface RouteInfo {
  method: string;
  /** Express form, e.g. /projects/:id */
  path: string;
  isPublic: boolean;
}

const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';

/** Every route the application registered, read from the controllers' own metadata. */
export function listRoutes(app: INestApplication): RouteInfo[] {
  return routeHandlers(app).map((r) => r.route);
}

/** Fills :params with a value. */
export function concretePath(path: string, value = 'x'): string {
  return path.replace(/:[A-Za-z]+/g, value);
}

export interface RouteHandler {
  route: RouteInfo;
  handler: (...args: unknown[]) => unknown;
  controller: new (...args: unknown[]) => unknown;
}

/** Every route with its handler and controller class, to read route metadata (permissions) from. */
export function routeHandlers(app: INestApplication): RouteHandler[] {
  const discovery = app.get(DiscoveryService);
  const scanner = app.get(MetadataScanner);
  const reflector = app.get(Reflector);
  const out: RouteHandler[] = [];
  for (const wrapper of discovery.getControllers()) {
    const instance = wrapper.instance as object | undefined;
    if (!instance || !wrapper.metatype) continue;
    const base = String(Reflect.getMetadata(PATH_METADATA, wrapper.metatype) ?? '');
    for (const name of scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
      const handler = (instance as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const sub = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '');
      const path = `/${[base, sub].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/').replace(/\/$/, '') || '/';
      const isPublic = Boolean(reflector.getAllAndOverride<boolean>(IS_PUBLIC, [handler, wrapper.metatype]));
      out.push({
        route: { method: RequestMethod[method].toLowerCase(), path, isPublic },
        handler,
        controller: wrapper.metatype as new (...args: unknown[]) => unknown,
      });
    }
  }
  return out;
}
