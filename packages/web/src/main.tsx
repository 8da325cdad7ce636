import '@blueprintjs/core/lib/css/blueprint.css';
import '@blueprintjs/icons/lib/css/blueprint-icons.css';
import './app/app.css';
import { installZodMessages } from '@lamina/domain';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createQueryClient } from './api/queryClient';
import { App } from './app/App';
import { detectEmbeddedMode } from './components/embedded';
import { createAppRouter } from './app/router';

// Form messages read as the server's: the domain's zod error map, installed once.
installZodMessages();

const container = document.getElementById('root');
if (!container) throw new Error('Missing #root element');

createRoot(container).render(
  <StrictMode>
    <App queryClient={createQueryClient()} router={createAppRouter()} embedded={detectEmbeddedMode()} />
  </StrictMode>,
);
