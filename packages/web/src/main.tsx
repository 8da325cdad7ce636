import '@blueprintjs/core/lib/css/blueprint.css';
// Not Blueprint's icon-font CSS (issue 28): the app draws SVG icons only, and with that CSS's
// @font-face Chromium fetched the 143 KB font (named in the body's font stack) for a glyph no system
// font had, beside the first tiles.
import './app/app.css';
import { installZodMessages } from '@lamina/domain';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createQueryClient } from './api/queryClient';
import { App } from './app/App';
import { installAppIcons } from './app/appIcons';
import { detectEmbeddedMode } from './components/embedded';
import { createAppRouter } from './app/router';
import { markStartup } from './lib/startupTiming';

markStartup('main');

// Form messages read as the server's: the domain's zod error map, installed once.
installZodMessages();
// Only the icons the app draws, from the main bundle (issue 28); done before React's first render.
void installAppIcons();

const container = document.getElementById('root');
if (!container) throw new Error('Missing #root element');

const queryClient = createQueryClient();
createRoot(container).render(
  <StrictMode>
    <App queryClient={queryClient} router={createAppRouter(queryClient)} embedded={detectEmbeddedMode()} />
  </StrictMode>,
);
