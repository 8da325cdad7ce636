import type { TestProject } from 'vitest/node';
import '../src/env.js';
import { startServer, type RunningServer } from '../src/server.js';

/** Fixed password of every demo account of the run's fresh database. */
const DEMO_PASSWORD = 'e2e-Lamina-Pass-2026';

let server: RunningServer | undefined;

/** Starts ONE Lamina server for the whole run; tests read its URL with inject('baseUrl'). */
export async function setup(project: TestProject): Promise<void> {
  server = await startServer(DEMO_PASSWORD);
  project.provide('baseUrl', server.baseUrl);
  project.provide('demoPassword', server.password);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  server = undefined;
}
