import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * What an incoming X-Request-Id may be to be kept: a short token of letters, digits and `. _ : -`
 * (a UUID, nginx's $request_id, most load balancers' ids). Anything else, or none, gets a new UUID,
 * so a log line or an audit row never carries a client's arbitrary text.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Fastify's genReqId: the incoming X-Request-Id when it is a safe token, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * Every response Fastify sends carries its request's id (the one in its log lines and audit rows),
 * errors and refusals included: set on the reply as the request arrives.
 */
export function registerRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
