import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { RESULTS_DIR } from '../src/paths.js';
import { startServer, type RunningServer } from '../src/server.js';

/** Fixed password of every demo account of the run's fresh database. */
const DEMO_PASSWORD = 'e2e-Lamina-Pass-2026';

let server: RunningServer | undefined;

/**
 * Starts ONE Lamina server for the whole run; tests read its URL with inject('baseUrl') (typed in
 * src/env.ts).
 */
export async function setup(project: TestProject): Promise<void> {
  await removeOldFailureScreenshots();
  server = await startServer(DEMO_PASSWORD);
  project.provide('baseUrl', server.baseUrl);
  project.provide('demoPassword', server.password);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  server = undefined;
}

/** Failure screenshots of an earlier run would read as failures of this one. */
async function removeOldFailureScreenshots(): Promise<void> {
  const files = await readdir(RESULTS_DIR).catch(() => [] as string[]);
  await Promise.all(
    files.filter((f) => f.startsWith('FAILED-')).map((f) => rm(path.join(RESULTS_DIR, f), { force: true })),
  );
}
