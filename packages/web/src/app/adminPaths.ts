/** The system-admin screens (the user menu links to them; the router guards them). */
export const QUERY_REASONS_PATH = '/admin/query-reasons';
