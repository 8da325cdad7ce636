import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { LOGIN_THROTTLE, MESSAGES, SIGNATURE_MEANINGS, SIGNATURE_MESSAGES, type RoleName } from '@lamina/domain';
import { createTestApp, type TestContext } from './testApp.js';
import { createAnnotationClass, createCase, createStudy, createStudyImage, PASSWORD } from './factories.js';
import { PEC, readFixtures } from './readFixtures.js';

/**
 * Issue 30, electronic signatures (21 CFR Part 11, docs/COMPLIANCE.md): in a study whose
 * `signatures` setting is on, Mark as Scored, Pass Lab QC and Pass ISC QC need the signer's
 * password; each signature is a record of signer, printed name, time, meaning and a hash of what it
 * signs, written with the action, audited, and never changed. A wrong password is a failed login of
 * the account; nothing of the action happens without a valid signature.
 */
let t: TestContext;
let signing: number;
let plain: number;
let eos: number;
const fx = readFixtures(() => t);
const { users, as, id, readCase, readAt, lastAuditId } = fx;
/** Mark as Scored answered as it is: the tests read its refusals. */
const markScored = fx.forwardCase;

/** A user with `role` in both studies. */
async function user(key: string, role: RoleName) {
  await fx.user(key, {
    studyRoles: [
      { studyId: signing, role },
      { studyId: plain, role },
    ],
  });
}

/** An independent SHA-256 of JSON with sorted keys: what the signature's hash must be. */
function sha256OfSorted(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash('sha256')
    .update(JSON.stringify(sorted(value)))
    .digest('hex');
}

async function signatures(caseId: number) {
  return t.database.db.selectFrom('signatures').selectAll().where('case_id', '=', caseId).orderBy('id').execute();
}

const auditSince = (since: number, actions: string[]) =>
  fx
    .auditRowsAfter(since, { actions })
    .select(['action', 'entity_type', 'entity_id', 'new_value', 'username', 'request_id'])
    .execute();

/** A case Pending Lab QC with two images waiting for lab QC. */
async function qcCase(study: number) {
  const db = t.database.db;
  const caseId = (await createCase(db, { studyId: study, status: 'PENDING_LAB_QC' })).id;
  const images = [];
  for (let i = 0; i < 2; i++)
    images.push((await createStudyImage(db, { studyId: study, caseId, status: 'LAB_QC_PENDING' })).id);
  return { caseId, images };
}

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  signing = (await createStudy(db)).id;
  plain = (await createStudy(db)).id;
  for (const study of [signing, plain]) {
    await db
      .updateTable('studies')
      .set({
        indications: ['EOSINOPHILIC_ESOPHAGITIS'],
        endpoints: JSON.stringify([PEC]),
        signatures: study === signing,
      })
      .where('id', '=', study)
      .execute();
    const made = (await createAnnotationClass(db, { studyId: study, type: 'POINT', name: 'Eosinophil' })).id;
    if (study === signing) eos = made;
  }
  await user('reader', 'CR');
  await user('locked', 'CR');
  await user('sso', 'CR');
  await user('labtech', 'LabTech');
  await user('isc', 'ISC');
  await user('dm', 'DM');
  // An account that signs in only through its identity provider has no Lamina password.
  await db.updateTable('users').set({ password_hash: null }).where('id', '=', id('sso')).execute();
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('Mark as Scored as an electronic signature', () => {
  it('without the password: 400 Signature required, and the read is not marked', async () => {
    const { caseId } = await readCase(signing, ['reader']);
    for (const payload of [{}, { signaturePassword: '' }]) {
      const response = await markScored('reader', caseId, payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ message: SIGNATURE_MESSAGES.required });
    }
    expect(await readAt(caseId, 'reader')).toBeNull();
    expect(await signatures(caseId)).toEqual([]);
    const frozen = await t.database.db.selectFrom('read_outcomes').select('id').where('case_id', '=', caseId).execute();
    expect(frozen).toEqual([]);
  });

  it('with a wrong password: 401, a failed login of the account, audited, nothing marked', async () => {
    const { caseId } = await readCase(signing, ['reader']);
    const since = await lastAuditId();
    const response = await markScored('reader', caseId, { signaturePassword: 'not-my-password' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ message: SIGNATURE_MESSAGES.passwordIncorrect });
    expect(await readAt(caseId, 'reader')).toBeNull();
    expect(await signatures(caseId)).toEqual([]);
    const failures = await t.database.db
      .selectFrom('login_failures')
      .select('id')
      .where(sql<string>`lower(username)`, '=', users.reader!.username.toLowerCase())
      .execute();
    expect(failures).toHaveLength(1);
    expect(await auditSince(since, ['SIGNATURE_FAILED'])).toMatchObject([
      { entity_type: 'user', entity_id: String(id('reader')), username: users.reader!.username },
    ]);
    // The session survives a wrong signature: it is not a logout.
    expect((await as('reader').request({ method: 'GET', url: `/api/cases/${caseId}` })).statusCode).toBe(200);
  });

  it('with the password: the read, its frozen values and its signature in one transaction, audited', async () => {
    const { caseId, imageId } = await readCase(signing, ['reader']);
    await fx.hpfWith('reader', imageId, eos, 3, { x: 2000, y: 2000, spread: 100 });
    const since = await lastAuditId();
    const response = await markScored('reader', caseId, { signaturePassword: PASSWORD });
    expect(response.statusCode, response.body).toBe(200);
    const read = await readAt(caseId, 'reader');
    expect(read).not.toBeNull();
    const [signature, ...more] = await signatures(caseId);
    expect(more).toEqual([]);
    const content = {
      record: 'case_read',
      caseId,
      readerId: id('reader'),
      role: 'PRIMARY',
      readAt: read!.toISOString(),
      includeAiCounts: null,
      values: { pec: 3 },
    };
    expect(signature).toMatchObject({
      user_id: id('reader'),
      printed_name: `Test ${users.reader!.username}`,
      kind: 'READ',
      meaning: SIGNATURE_MEANINGS.READ,
      method: 'password',
      study_id: signing,
      case_id: caseId,
      image_id: null,
      content,
      content_hash: sha256OfSorted(content),
    });
    expect(signature!.signed_at.toISOString()).toBe(read!.toISOString());
    const audited = await auditSince(since, ['CASE_READ_MARKED', 'SIGNATURE_APPLIED']);
    expect(audited.map((a) => a.action)).toEqual(['CASE_READ_MARKED', 'SIGNATURE_APPLIED']);
    // One request, one transaction: the signature's audit row carries the read's request id.
    expect(new Set(audited.map((a) => a.request_id)).size).toBe(1);
    expect(JSON.parse(audited[1]!.new_value!)).toEqual({
      signature: signature!.id,
      printedName: `Test ${users.reader!.username}`,
      signedAt: read!.toISOString(),
      meaning: SIGNATURE_MEANINGS.READ,
      method: 'password',
      contentHash: sha256OfSorted(content),
    });
  });

  it('a signature is never changed, deleted or moved to another record', async () => {
    const { caseId } = await readCase(signing, ['reader']);
    expect((await markScored('reader', caseId, { signaturePassword: PASSWORD })).statusCode).toBe(200);
    const [signature] = await signatures(caseId);
    const other = await readCase(signing, ['reader']);
    const db = t.database.db;
    await expect(
      db.updateTable('signatures').set({ case_id: other.caseId }).where('id', '=', signature!.id).execute(),
    ).rejects.toThrow(/never changed or deleted/);
    await expect(
      db.updateTable('signatures').set({ meaning: 'Approved' }).where('id', '=', signature!.id).execute(),
    ).rejects.toThrow(/never changed or deleted/);
    await expect(db.deleteFrom('signatures').where('id', '=', signature!.id).execute()).rejects.toThrow(
      /never changed or deleted/,
    );
    expect(await signatures(caseId)).toEqual([signature]);
  });

  it('wrong signature passwords count toward the account’s lockout: the login is refused after the limit', async () => {
    const { caseId } = await readCase(signing, ['locked']);
    for (let i = 0; i < LOGIN_THROTTLE.maxFailures; i++)
      expect((await markScored('locked', caseId, { signaturePassword: `wrong-${i}` })).statusCode).toBe(401);
    // Past the limit even the right password is not checked, for signing and for logging in.
    const throttled = await markScored('locked', caseId, { signaturePassword: PASSWORD });
    expect(throttled.statusCode).toBe(429);
    expect(throttled.json()).toMatchObject({ message: MESSAGES.tooManyLogins });
    const loginAttempt = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: users.locked!.username, password: PASSWORD },
    });
    expect(loginAttempt.statusCode).toBe(429);
    expect(await readAt(caseId, 'locked')).toBeNull();
  });

  it('an account without a Lamina password is told to sign in again at its provider', async () => {
    const { caseId } = await readCase(signing, ['sso']);
    const response = await markScored('sso', caseId, { signaturePassword: 'anything' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ message: SIGNATURE_MESSAGES.reauthenticate });
    expect(await readAt(caseId, 'sso')).toBeNull();
  });

  it('a study that does not sign asks no password and records no signature', async () => {
    const { caseId } = await readCase(plain, ['reader']);
    expect((await markScored('reader', caseId)).statusCode).toBe(200);
    expect(await readAt(caseId, 'reader')).not.toBeNull();
    expect(await signatures(caseId)).toEqual([]);
  });
});

describe('the audit trail shows each signature', () => {
  it('in the CSV and the PDF: the signer, the meaning, the time and the hash', async () => {
    const { caseId } = await readCase(signing, ['reader']);
    expect((await markScored('reader', caseId, { signaturePassword: PASSWORD })).statusCode).toBe(200);
    const [signature] = await signatures(caseId);
    const csv = await as('dm').request({ method: 'GET', url: `/api/audit-trail?reportFormat=csv&studyId=${signing}` });
    expect(csv.statusCode, csv.body).toBe(200);
    const line = csv.body
      .split('\n')
      .find((l) => l.includes('SIGNATURE_APPLIED') && l.includes(signature!.content_hash));
    expect(line).toBeDefined();
    expect(line).toContain(SIGNATURE_MEANINGS.READ);
    expect(line).toContain(`Test ${users.reader!.username}`);
    expect(line).toContain(signature!.signed_at.toISOString());
    const pdf = await as('dm').request({ method: 'GET', url: `/api/audit-trail?reportFormat=pdf&studyId=${signing}` });
    expect(pdf.statusCode).toBe(200);
    const dir = mkdtempSync(path.join(tmpdir(), 'lamina-pdf-'));
    try {
      writeFileSync(path.join(dir, 'a.pdf'), pdf.rawPayload);
      const text = execFileSync('pdftotext', [path.join(dir, 'a.pdf'), '-'], { encoding: 'utf8' });
      expect(text).toContain('SIGNATURE_APPLIED');
      expect(text).toContain(SIGNATURE_MEANINGS.READ);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Pass Lab QC and Pass ISC QC as electronic signatures', () => {
  it('an image’s QC pass: refused without the password, signed with it, image and case linked', async () => {
    const { caseId, images } = await qcCase(signing);
    const pass = (imageId: number, payload?: object) =>
      as('labtech').request({ method: 'PATCH', url: `/api/images/${imageId}/pass-qc`, ...(payload && { payload }) });
    const refused = await pass(images[0]!);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ message: SIGNATURE_MESSAGES.required });
    const status = await t.database.db
      .selectFrom('images')
      .select('status')
      .where('id', '=', images[0]!)
      .executeTakeFirstOrThrow();
    expect(status.status).toBe('LAB_QC_PENDING');

    expect((await pass(images[0]!, { signaturePassword: PASSWORD })).statusCode).toBe(200);
    const [signature] = await signatures(caseId);
    const content = { record: 'image_qc', imageId: images[0], caseId, from: 'LAB_QC_PENDING', to: 'ISC_QC_PENDING' };
    expect(signature).toMatchObject({
      user_id: id('labtech'),
      kind: 'LAB_QC',
      meaning: SIGNATURE_MEANINGS.LAB_QC,
      case_id: caseId,
      image_id: images[0],
      content,
      content_hash: sha256OfSorted(content),
    });
  });

  it('the case’s Pass Lab QC and Pass ISC QC each sign the step and the case’s images', async () => {
    const { caseId, images } = await qcCase(signing);
    const forward = (key: string, payload: object) =>
      as(key).request({ method: 'PATCH', url: `/api/cases/${caseId}/status/forward`, payload });
    expect((await forward('labtech', {})).statusCode).toBe(400);
    expect((await forward('labtech', { signaturePassword: PASSWORD })).statusCode).toBe(200);
    expect((await forward('isc', { signaturePassword: 'wrong' })).statusCode).toBe(401);
    expect((await forward('isc', { signaturePassword: PASSWORD })).statusCode).toBe(200);
    const signed = await signatures(caseId);
    expect(signed.map((s) => [s.user_id, s.kind, s.meaning, s.content])).toEqual([
      [
        id('labtech'),
        'LAB_QC',
        SIGNATURE_MEANINGS.LAB_QC,
        { record: 'case_qc', caseId, from: 'PENDING_LAB_QC', to: 'PENDING_QC', images },
      ],
      [
        id('isc'),
        'ISC_QC',
        SIGNATURE_MEANINGS.ISC_QC,
        { record: 'case_qc', caseId, from: 'PENDING_QC', to: 'PROCESSED', images },
      ],
    ]);
    expect(await fx.caseStatus(caseId)).toBe('PROCESSED');
  });
});
