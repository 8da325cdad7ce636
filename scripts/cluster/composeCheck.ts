/**
 * Keeps compose.yaml and deploy/nginx/lamina.conf honest without Docker (nothing here can pull
 * an image): the file parses, the topology is the reference one, every variable a Lamina service
 * sets is one the server reads, the simulation sets no variable compose lacks a counterpart of,
 * and the nginx conf compose mounts is the simulation's template rendered for compose's services.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { COMPOSE_NGINX_CONF, COMPOSE_UPSTREAMS, renderLaminaConf, ROOT } from './nginx.js';

/** Every environment variable the server's source reads (`env.X`, `process.env.X`, `env['X']`). */
export function serverVariables(): Set<string> {
  const names = new Set<string>(['NODE_ENV', 'MALLOC_ARENA_MAX']);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        const text = readFileSync(full, 'utf8');
        for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1] ?? '');
        for (const m of text.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) names.add(m[1] ?? '');
      }
    }
  };
  walk(path.join(ROOT, 'packages', 'server', 'src'));
  return names;
}

interface ComposeService {
  image?: string;
  build?: unknown;
  environment?: Record<string, string> | string[];
}

function envNames(env: ComposeService['environment']): string[] {
  if (!env) return [];
  return Array.isArray(env) ? env.map((e) => e.split('=')[0] ?? '') : Object.keys(env);
}

/** The variables of the simulation that are its own (short timings, a test password, paths here). */
const SIMULATION_ONLY = new Set([
  'DEMO',
  'DEMO_PASSWORD',
  'HOST',
  'PORT',
  'DATA_DIR',
  'WEB_DIST',
  'LOG_LEVEL',
  'AUDIT_ANCHOR_INTERVAL',
  'WORKER_HEARTBEAT_INTERVAL',
  'WORKER_STALE_AFTER',
  'QUERY_REMINDER_CRON',
  'METRICS_PORT',
  'METRICS_HOST',
]);

export function checkCompose(simulationVariables: string[] = []): { problems: string[]; summary: string } {
  const problems: string[] = [];
  const compose = parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
    services?: Record<string, ComposeService>;
  };
  const services = compose.services ?? {};
  const known = serverVariables();
  const lamina = Object.entries(services).filter(([, s]) => s.build !== undefined || s.image?.startsWith('lamina'));
  const roles = new Map<string, number>();
  const composeVariables = new Set<string>();
  for (const [name, service] of lamina) {
    const env = service.environment;
    const role = env && !Array.isArray(env) ? env.ROLES : undefined;
    if (!role) problems.push(`${name}: no ROLES`);
    else roles.set(role, (roles.get(role) ?? 0) + 1);
    for (const variable of envNames(env)) {
      composeVariables.add(variable);
      if (!known.has(variable)) problems.push(`${name}: ${variable} is not a variable the server reads`);
    }
  }
  for (const [role, count] of [
    ['api', 2],
    ['tiles', 2],
    ['worker', 1],
  ] as const) {
    if ((roles.get(role) ?? 0) !== count)
      problems.push(`compose runs ${roles.get(role) ?? 0} ${role} services, not ${count}`);
  }
  for (const other of ['postgres', 'minio', 'minio-init', 'nginx'])
    if (!services[other]) problems.push(`no ${other} service`);
  for (const variable of simulationVariables) {
    if (!known.has(variable)) problems.push(`the simulation sets ${variable}, which the server does not read`);
    else if (!SIMULATION_ONLY.has(variable) && !composeVariables.has(variable))
      problems.push(`the simulation sets ${variable}, compose.yaml does not`);
  }
  const expected = renderLaminaConf(COMPOSE_UPSTREAMS);
  let actual = '';
  try {
    actual = readFileSync(COMPOSE_NGINX_CONF, 'utf8');
  } catch {
    // reported below
  }
  if (actual !== expected)
    problems.push(
      `${path.relative(ROOT, COMPOSE_NGINX_CONF)} is not the template rendered for compose: npm run test:cluster -- --write-nginx`,
    );
  return {
    problems,
    summary: `${lamina.length} Lamina services (${[...roles].map(([r, n]) => `${r} × ${n}`).join(', ')}), ${composeVariables.size} variables, all read by the server; nginx conf rendered from the template`,
  };
}
