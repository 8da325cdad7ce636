/**
 * The early script's entry (lib/earlyStart.ts): built by vitePlugins/earlyStart.ts into a classic
 * script written inline, first in index.html's head; the build names the viewer's files on its tag.
 */
import { readViewerAssets, startEarly } from './lib/earlyStart';
import { markStartup } from './lib/startupTiming';
import { readCaseImage, readSidebarOpen, shownCaseImage } from './features/viewer/viewerPreferences';

markStartup('early');

const script = document.currentScript as HTMLScriptElement | null;
startEarly(window.location.pathname, readViewerAssets(script?.dataset.viewerAssets), Date.now(), {
  viewport: [window.innerWidth, window.innerHeight],
  sidebarOpen: readSidebarOpen(),
  caseImage: (caseId, images) => shownCaseImage(images, readCaseImage(caseId))?.id ?? null,
});
