import type { FastifyInstance } from 'fastify';
import { configSchema, type AppConfig } from '@lamina/domain';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Config } from '../../platform/config.js';
import { policy } from '../../platform/rbac/policy.js';
import { serverImageExtensions } from '../../platform/openslide/slideFormats.js';

/** Public client configuration (spec doc 1 §3 Configuration). */
export function configRoutes(config: Config) {
  const body: AppConfig = {
    ssoLoginUrl: config.ssoLoginUrl,
    ssoLogoutUrl: config.ssoLogoutUrl,
    tileServerLocation: config.tileServerLocation,
    localLogin: config.localLogin,
    oidcName: config.oidc?.name ?? null,
    imageExtensions: serverImageExtensions(),
  };
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.get(
      '/api/config',
      { config: { policy: policy.public() }, schema: { response: { 200: configSchema } } },
      async () => body,
    );
  };
}
