/**
 * The early script's entry (lib/earlyStart.ts): index.html loads it first, as a classic `async`
 * script built by vitePlugins/earlyStart.ts; the build names the viewer's files on its tag.
 */
import { readViewerAssets, startEarly } from './lib/earlyStart';
import { markStartup } from './lib/startupTiming';

markStartup('early');

const script = document.currentScript as HTMLScriptElement | null;
startEarly(window.location.pathname, readViewerAssets(script?.dataset.viewerAssets));
