/**
 * nginx as the load balancer: deploy/nginx/lamina.conf.template rendered for a set of upstreams.
 * The simulation renders it for the processes it starts; compose.yaml mounts the same template
 * rendered for its services (deploy/nginx/lamina.conf, checked by `composeNginxConf`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const NGINX_TEMPLATE = path.join(ROOT, 'deploy', 'nginx', 'lamina.conf.template');
export const COMPOSE_NGINX_CONF = path.join(ROOT, 'deploy', 'nginx', 'lamina.conf');

export interface NginxUpstreams {
  listen: string;
  api: string[];
  tiles: string[];
  s3: string[];
  bucket: string;
}

/**
 * `max_fails=1 fail_timeout=5s`: a process that failed once is left alone for 5 s (open-source
 * nginx has only these passive health checks); its requests go to the others meanwhile.
 */
function servers(addresses: string[]): string {
  return addresses.map((a) => `  server ${a} max_fails=1 fail_timeout=5s;`).join('\n');
}

export function renderLaminaConf(u: NginxUpstreams): string {
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(u.bucket)) throw new Error(`unusual bucket name '${u.bucket}'`);
  const values: Record<string, string> = {
    LISTEN: u.listen,
    API_SERVERS: servers(u.api),
    TILES_SERVERS: servers(u.tiles),
    S3_SERVERS: servers(u.s3),
    S3_BUCKET: u.bucket,
  };
  return readFileSync(NGINX_TEMPLATE, 'utf8').replace(/\{\{([A-Z0-9_]+)\}\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`unknown placeholder ${whole} in ${NGINX_TEMPLATE}`);
    return value;
  });
}

/** The services of compose.yaml, as deploy/nginx/lamina.conf names them. */
export const COMPOSE_UPSTREAMS: NginxUpstreams = {
  listen: '8080',
  api: ['api-1:8080', 'api-2:8080'],
  tiles: ['tiles-1:8080', 'tiles-2:8080'],
  s3: ['minio:9000'],
  bucket: 'lamina',
};

/** The whole nginx.conf of a foreground nginx of our own, around the rendered http part. */
export function nginxMainConf(prefix: string, httpPart: string, workers = 1): string {
  const asRoot = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `daemon off;
${asRoot}worker_processes ${workers};
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 1024; }
http {
  # No query strings (tile tokens, signatures); $upstream_status lists every process tried.
  log_format lamina '$request_method $uri $status upstream=$upstream_addr statuses=$upstream_status';
  access_log ${prefix}/access.log lamina;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  default_type application/octet-stream;
${httpPart}
}
`;
}
