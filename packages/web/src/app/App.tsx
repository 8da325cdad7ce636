import { BlueprintProvider } from '@blueprintjs/core';
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import { RouterProvider, type createBrowserRouter } from 'react-router';
import { EmbeddedModeContext } from '../components/embedded';

interface AppProps {
  queryClient: QueryClient;
  router: ReturnType<typeof createBrowserRouter>;
  embedded: boolean;
}

export function App({ queryClient, router, embedded }: AppProps) {
  return (
    <BlueprintProvider>
      <QueryClientProvider client={queryClient}>
        <EmbeddedModeContext.Provider value={embedded}>
          <RouterProvider router={router} />
        </EmbeddedModeContext.Provider>
      </QueryClientProvider>
    </BlueprintProvider>
  );
}
