import type { QueryClient } from '@tanstack/react-query';
import { imageQueryOptions, parseImageId } from '../../api/imageQuery';
import { parsePositiveId } from '../../lib/ids';
import { caseQueryOptions } from '../cases/api';
import { readCaseImage, shownCaseImage } from './viewerPreferences';

/**
 * The viewers' critical path (issue 28): what the first tiles wait for is asked for the moment the
 * URL is known — by the route's loader, before the session is checked and before the viewer's
 * chunk has loaded — through the same query options the pages use, so TanStack Query hands the
 * pages the answers (or the requests in flight). A 401 does not redirect here: the guard, which
 * asks for the session at the same time, sends the browser to the login page once.
 */
type RouteParams = Readonly<Record<string, string | undefined>>;

const NO_REDIRECT = { redirectOn401: false };
const ignore = () => undefined;

/** /studies/:studyId/images/:id: the image. Settles when it is in (or has failed). */
export async function prefetchImageViewer(client: QueryClient, params: RouteParams): Promise<void> {
  const id = parseImageId(params.id);
  // A failure shows when the page asks again (or the guard has sent the browser away).
  if (id !== null) await client.query(imageQueryOptions(id, NO_REDIRECT)).catch(ignore);
}

/**
 * /studies/:studyId/cases/:id: the case, then the image the page will show (the one last shown
 * in this case on this browser, else the first). Settles when both are in (or one has failed).
 */
export async function prefetchCaseViewer(client: QueryClient, params: RouteParams): Promise<void> {
  const caseId = parsePositiveId(params.id);
  const studyId = parsePositiveId(params.studyId);
  if (caseId === null || studyId === null) return;
  const c = await client.query(caseQueryOptions(caseId, NO_REDIRECT)).catch(ignore);
  if (!c || c.studyId !== studyId) return;
  const shown = shownCaseImage(c.images, readCaseImage(caseId));
  if (shown) await client.query(imageQueryOptions(shown.id, NO_REDIRECT)).catch(ignore);
}
