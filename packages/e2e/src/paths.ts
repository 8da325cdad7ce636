import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** packages/e2e/test-results (gitignored at the repository root). */
export const RESULTS_DIR = path.resolve(here, '../test-results');

/** The repository root (/work/main). */
export const REPO_ROOT = path.resolve(here, '../../..');
