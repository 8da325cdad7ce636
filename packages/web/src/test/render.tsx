import { BlueprintProvider } from '@blueprintjs/core';
import type { AppConfig, UserInfo } from '@lamina/domain';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, type RenderResult } from '@testing-library/react';
import type { ReactNode } from 'react';
import { RouterProvider, createMemoryRouter, useLocation, type RouteObject } from 'react-router';
import { queryKeys } from '../api/queryKeys';
import { EmbeddedModeContext } from '../components/embedded';

export function testQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: { queries: { retry: false, gcTime: Infinity }, mutations: { retry: false } },
  });
}

interface Options {
  /** Initial URL; default `/`. */
  path?: string;
  /** Route pattern the element is mounted at; default `*`. */
  routePath?: string;
  embedded?: boolean;
  queryClient?: QueryClient;
  /** Seeds the config query, as the shell has it loaded before any page renders. */
  config?: AppConfig;
  /** Seeds the users/info query (`null`: logged out). */
  user?: UserInfo | null;
}

/** Renders an element inside the app's providers and a memory router. */
export function renderWithProviders(
  element: ReactNode,
  options: Options = {},
): RenderResult & { queryClient: QueryClient } {
  const routes: RouteObject[] = [{ path: options.routePath ?? '*', element }];
  return renderRoutes(routes, options);
}

export function renderRoutes(
  routes: RouteObject[],
  options: Options = {},
): RenderResult & { queryClient: QueryClient } {
  const queryClient = options.queryClient ?? testQueryClient();
  if (options.config) queryClient.setQueryData(queryKeys.config, options.config);
  if (options.user !== undefined) queryClient.setQueryData(queryKeys.userInfo, options.user);
  const router = createMemoryRouter(routes, { initialEntries: [options.path ?? '/'] });
  const result = render(
    <BlueprintProvider>
      <QueryClientProvider client={queryClient}>
        <EmbeddedModeContext.Provider value={options.embedded ?? false}>
          <RouterProvider router={router} />
        </EmbeddedModeContext.Provider>
      </QueryClientProvider>
    </BlueprintProvider>,
  );
  return { ...result, queryClient };
}

/** Shows where the router is, for tests that follow a navigation. */
export function LocationProbe() {
  const location = useLocation();
  return <div data-testid="location">{`${location.pathname}${location.search}`}</div>;
}
