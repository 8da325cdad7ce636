import type { FastifyInstance } from 'fastify';
import type { AppConfig } from '@lamina/domain';
import type { Config } from '../../platform/config.js';
import { policy } from '../../platform/rbac/policy.js';

/** Public client configuration (spec doc 1 §3 Configuration). */
export function configRoutes(config: Config) {
  const body: AppConfig = {
    ssoLoginUrl: config.ssoLoginUrl,
    ssoLogoutUrl: config.ssoLogoutUrl,
    tileServerLocation: config.tileServerLocation,
  };
  return async (app: FastifyInstance) => {
    app.get('/api/config', { config: { policy: policy.public() } }, async () => body);
    app.get('/api/health', { config: { policy: policy.public() } }, async () => ({ success: true, message: 'ok' }));
  };
}
