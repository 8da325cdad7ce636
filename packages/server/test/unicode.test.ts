import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isValidText, TEXT_MESSAGES } from '@lamina/domain';
import { verifyAuditChain } from '../src/platform/audit/verify.js';
import { recordAudit, SYSTEM_ACTOR } from '../src/platform/audit/audit.js';
import { registerErrorHandler } from '../src/platform/http/errorHandler.js';
import { createStudy } from './factories.js';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createUser, PASSWORD } from './factories.js';

/**
 * Issue 9, defect 1: one anonymous login with a lone surrogate broke the audit chain (hashed as a
 * JavaScript string, stored as U+FFFD). Every string the API accepts must be well-formed Unicode
 * without NUL, and the chain is hashed from exactly what is stored.
 */
let t: TestContext;
let admin: Session;
let target: { id: number };
beforeAll(async () => {
  t = await createTestApp();
  const sa = await createUser(t.database.db, { systemAdmin: true, globalRoles: ['SystemAdmin', 'StudyAdmin'] });
  admin = await login(t.app, sa.username, PASSWORD);
  target = await createUser(t.database.db);
});
afterAll(async () => {
  await t.close();
});

/** Full Unicode: any code unit sequence (lone surrogates, NUL) and the usual suspects, mixed. */
const text = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }),
  fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 12 }),
  fc.constantFrom('\ud800', 'x\udc00y', 'a\u0000b', '\u0000', 'e\u0301\u0327', '😀𝔘病理', '\udbff\udfff', 'ø\ud83d'),
);

const invalidText = { success: false, message: TEXT_MESSAGES.invalidCharacters };

async function expectChainVerifies() {
  const result = await verifyAuditChain(t.database.db);
  expect(result.brokenAt, JSON.stringify(result.brokenAt)).toBeUndefined();
  expect(result.ok).toBe(true);
}

let attempts = 0;

describe('text the API accepts: well-formed Unicode without NUL', () => {
  it('login: invalid text is refused with 400 before anything is recorded; valid text is a plain 401', async () => {
    await fc.assert(
      fc.asyncProperty(text, text, async (username, password) => {
        // Each attempt from its own address: shrinking repeats one username many times, and the
        // login throttle (10 failures per account and IP) would answer 429 — not what is tested here.
        attempts += 1;
        const response = await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { username, password },
          remoteAddress: `10.${(attempts >> 16) & 255}.${(attempts >> 8) & 255}.${attempts & 255}`,
        });
        expect(response.statusCode).toBeLessThan(500);
        if (!isValidText(username) || !isValidText(password)) {
          expect(response.statusCode).toBe(400);
          expect(response.json()).toEqual(invalidText);
        } else {
          expect([400, 401]).toContain(response.statusCode);
        }
      }),
      { numRuns: 150 },
    );
    await expectChainVerifies();
  });

  it('PUT /api/users/{id}: a valid name is stored exactly as sent (trimmed); an invalid one changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(text, async (firstName) => {
        const before = await t.database.db
          .selectFrom('users')
          .select('first_name')
          .where('id', '=', target.id)
          .executeTakeFirstOrThrow();
        const response = await admin.request({ method: 'PUT', url: `/api/users/${target.id}`, payload: { firstName } });
        expect(response.statusCode, response.body).toBeLessThan(500);
        const after = await t.database.db
          .selectFrom('users')
          .select('first_name')
          .where('id', '=', target.id)
          .executeTakeFirstOrThrow();
        if (!isValidText(firstName)) {
          expect(response.json()).toEqual(invalidText);
          expect(after).toEqual(before);
        } else if (response.statusCode === 200) {
          expect(after.first_name).toBe(firstName.trim());
        } else {
          expect(after).toEqual(before); // blank or too long: a field message, nothing stored
        }
      }),
      { numRuns: 150 },
    );
    await expectChainVerifies();
  });

  it('studies: names, sponsors and reasons for change in full Unicode keep the chain whole', async () => {
    await fc.assert(
      fc.asyncProperty(text, text, async (name, reason) => {
        const created = await admin.request({
          method: 'POST',
          url: '/api/studies',
          payload: {
            name: `${name} ${randomBytes(3).toString('hex')}`,
            sponsor: name,
            protocolIds: [],
            visitIds: ['V1'],
            labVisitIds: [],
            indications: ['CROHNS_DISEASE'],
            segments: null,
            anatomicalSegments: [],
            modality: ['HISTOPATHOLOGY'],
            onHold: false,
            onHoldReason: null,
            hpfClasses: [],
            pointClasses: [],
            freehandClasses: [],
            multilineClasses: [],
          },
        });
        expect(created.statusCode, created.body).toBeLessThan(500);
        if (!isValidText(name)) {
          expect(created.json()).toEqual(invalidText);
          return;
        }
        if (created.statusCode !== 201) return; // a field rule (length, blank) refused it
        const study = created.json<{ study: { id: number; name: string } }>().study;
        const renamed = await admin.request({
          method: 'PUT',
          url: `/api/studies/${study.id}`,
          payload: { name: { value: `${study.name}!`, reasonForChange: reason } },
        });
        expect(renamed.statusCode, renamed.body).toBeLessThan(500);
        if (!isValidText(reason)) expect(renamed.json()).toEqual(invalidText);
      }),
      { numRuns: 80 },
    );
    await expectChainVerifies();
  });
});

describe('the audit chain is hashed from what is stored', () => {
  it('values the API never sees (metadata, file names) with lone surrogates or NUL are stored and still verify', async () => {
    await t.database.db.transaction().execute((tx) =>
      recordAudit(tx, SYSTEM_ACTOR, [
        {
          action: 'TEST_UNICODE',
          entityType: 'thing',
          oldValue: 'lone \ud800 surrogate',
          newValue: { name: 'nul \u0000 inside', astral: '😀' },
          reason: 'reason with \u0000 and \udfff',
        },
      ]),
    );
    const row = await t.database.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'TEST_UNICODE')
      .executeTakeFirstOrThrow();
    expect(row.old_value).toBe('lone \uFFFD surrogate');
    expect(row.reason).toBe('reason with \uFFFD and \uFFFD');
    await expectChainVerifies();
  });
});

describe('NUL in any text input (issue 9, defect 6): 400, never 500', () => {
  it.each([
    ['login username', 'POST', '/api/auth/login', { username: 'a\u0000b', password: 'x' }],
    ['users list filter', 'POST', '/api/users/list', { name: 'a\u0000' }],
    ['studies list filter', 'GET', '/api/studies/list?name=a%00b', undefined],
    ['study name', 'POST', '/api/studies', { name: '\u0000' }],
    ['user name', 'PUT', '/api/users/{user}', { lastName: 'x\u0000' }],
    ['reason', 'PATCH', '/api/users/{user}/deactivate', { reason: 'because\u0000' }],
    [
      'notify-upload text',
      'POST',
      '/api/images/notify-upload',
      { studyId: '{study}', numFiles: 1, failures: ['a\u0000.svs'] },
    ],
    ['an unknown key', 'POST', '/api/users/list', { ['k\u0000']: 1 }],
  ])('%s', async (_name, method, url, payload) => {
    const study = await createStudy(t.database.db);
    const fill = (text: string) => text.replace('{user}', String(target.id)).replace('"{study}"', String(study.id));
    const response = await admin.request({
      method: method,
      url: fill(url),
      ...(payload ? { payload: fill(JSON.stringify(payload)), headers: { 'content-type': 'application/json' } } : {}),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual(invalidText);
  });

  it('a database data error that slips past validation is a 400 with a message, not a 500', async () => {
    const app = Fastify();
    registerErrorHandler(app);
    app.get('/nul', async () => {
      await sql`select ${'a\u0000b'}::text as v`.execute(t.database.db);
      return { ok: true };
    });
    app.get('/range', async () => {
      await sql`select ${'4294967295'}::integer as v`.execute(t.database.db);
      return { ok: true };
    });
    const nul = await app.inject({ method: 'GET', url: '/nul' });
    expect([nul.statusCode, nul.json()]).toEqual([400, invalidText]);
    const range = await app.inject({ method: 'GET', url: '/range' });
    expect([range.statusCode, range.json()]).toEqual([
      400,
      { success: false, message: 'A value has the wrong format' },
    ]);
    await app.close();
  });
});
