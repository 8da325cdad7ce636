import { configSchema, type AppConfig } from '@lamina/domain';
import { useQuery } from '@tanstack/react-query';
import { apiFetch } from './client';
import { queryKeys } from './queryKeys';

/** GET /api/config (public): SSO login/logout URLs and the tile server location. */
export function useConfig() {
  return useQuery({
    queryKey: queryKeys.config,
    queryFn: ({ signal }): Promise<AppConfig> =>
      apiFetch('/api/config', { schema: configSchema, redirectOn401: false, signal }),
    staleTime: Infinity,
  });
}
