/**
 * Full-page navigation. The spec wants redirect actions to reload the page (doc 1 §2.2), so these
 * go through `window.location`, never the router. Kept in one module so tests can mock it.
 */

/** Navigates with a new history entry (e.g. after login, after a 401). */
export function fullPageNavigate(url: string): void {
  window.location.assign(url);
}

/** Navigates replacing the current history entry, so Back does not land on a page that bounces. */
export function fullPageReplace(url: string): void {
  window.location.replace(url);
}

export function reloadPage(): void {
  window.location.reload();
}

/** Path plus query string of the current page, e.g. `/studies/3/cases?x=1`. */
export function currentPath(): string {
  return `${window.location.pathname}${window.location.search}`;
}

export function currentPathname(): string {
  return window.location.pathname;
}
