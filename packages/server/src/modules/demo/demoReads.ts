import { hpfRadiusPx, isNashStudy, type CreateAnnotationRequest } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { loadPrincipal, type Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import {
  AnnotationService,
  annotatedImage,
  createdEvent,
  prepareAnnotation,
  studyClasses,
  type AnnotatedImage,
} from '../annotations/annotationService.js';
import { CaseService } from '../cases/caseService.js';
import { DEMO_OUTCOMES_STUDY } from './demoSeed.js';
import { demoTissueBlobs, seededRandom, type TissueBlob } from './demoSlide.js';

type DemoReader = 'reader1' | 'reader2' | 'reader3';

/** One reader's work on a demo case: the eosinophils of their peak HPF, and whether they marked it scored. */
interface DemoReaderWork {
  reader: DemoReader;
  /** The peak eosinophil count their annotations give (the largest count among their HPFs). */
  pec: number;
  /** Marked as Scored; a reader who has not is still drawing (one HPF so far). */
  scored: boolean;
}

export interface DemoOutcomeCase {
  procId: string;
  subjectId: string;
  siteId: string;
  visitId: string;
  /** The primary readers' work, in the order they do it. */
  reads: readonly DemoReaderWork[];
  /** Assigned by the ISC once the case waits for adjudication, then reads it to completion. */
  adjudicator?: { reader: DemoReader; pec: number };
}

/**
 * The read-outcomes study's cases (issue 30), read by reader1 and reader2: seven whose readers agree
 * on the category (PEC ≥ 15 or not) and complete, one they disagree on (12 vs 19) that reader3
 * adjudicates (17), one they disagree on (14 vs 21) left waiting for the ISC to assign an
 * adjudicator, and one reader2 is still reading. Subjects go from baseline to week 24.
 */
export const DEMO_OUTCOME_CASES: readonly DemoOutcomeCase[] = [
  ...(
    [
      ['ENDO-4001', '4001', 'BASELINE', 40, 36],
      ['ENDO-4002', '4001', 'WEEK 24', 3, 5],
      ['ENDO-4003', '4002', 'BASELINE', 22, 25],
      ['ENDO-4004', '4002', 'WEEK 24', 0, 1],
      ['ENDO-4005', '4003', 'BASELINE', 18, 16],
      ['ENDO-4006', '4003', 'WEEK 24', 9, 7],
      ['ENDO-4007', '4004', 'BASELINE', 31, 34],
    ] as const
  ).map(([procId, subjectId, visitId, first, second]) => ({
    procId,
    subjectId,
    siteId: 'SITE-01',
    visitId,
    reads: [
      { reader: 'reader1', pec: first, scored: true },
      { reader: 'reader2', pec: second, scored: true },
    ] as const,
  })),
  {
    procId: 'ENDO-4008',
    subjectId: '4004',
    siteId: 'SITE-01',
    visitId: 'WEEK 24',
    reads: [
      { reader: 'reader1', pec: 12, scored: true },
      { reader: 'reader2', pec: 19, scored: true },
    ],
    adjudicator: { reader: 'reader3', pec: 17 },
  },
  {
    procId: 'ENDO-4009',
    subjectId: '4005',
    siteId: 'SITE-02',
    visitId: 'BASELINE',
    reads: [
      { reader: 'reader1', pec: 14, scored: true },
      { reader: 'reader2', pec: 21, scored: true },
    ],
  },
  {
    procId: 'ENDO-4010',
    subjectId: '4005',
    siteId: 'SITE-02',
    visitId: 'WEEK 24',
    reads: [
      { reader: 'reader1', pec: 28, scored: true },
      { reader: 'reader2', pec: 9, scored: false },
    ],
  },
];

/** A marked read's eosinophils per HPF: the peak field and two quieter ones. */
export const hpfCounts = (pec: number, scored: boolean): number[] =>
  scored ? [pec, Math.floor(pec * 0.6), Math.floor(pec * 0.3)] : [pec];

/** HPF fields per read: each reader's HPFs never overlap one another, so a point has one HPF. */
const FIELDS = 3;

/** Each reader's offset of the fields' centres, in HPF radii: two readers never centre a field alike. */
const READER_SHIFTS: readonly (readonly [number, number])[] = [
  [0, 0],
  [0.3, -0.2],
  [-0.25, 0.3],
];

/** Whether (x, y) lies in the blob (a rotated ellipse). */
function inBlob(b: TissueBlob, x: number, y: number): boolean {
  const t = (b.angle * Math.PI) / 180;
  const dx = x - b.cx;
  const dy = y - b.cy;
  const u = dx * Math.cos(t) + dy * Math.sin(t);
  const v = -dx * Math.sin(t) + dy * Math.cos(t);
  return (u / b.rx) ** 2 + (v / b.ry) ** 2 <= 1;
}

/**
 * The centres of the case's HPF fields: on the slide's tissue (the blobs' centres and points half
 * way out along their axes), far enough from the edges for a reader's shifted HPF and its points,
 * FIELDS of them at least two radii and a margin apart, those whose disc lies on tissue first.
 * `index` turns the choice so that the cases do not all read the same spots. Falls back to a grid
 * over the slide where tissue runs out.
 */
function fieldCentres(width: number, height: number, radius: number, index: number): [number, number][] {
  const margin = radius * 1.7;
  const fits = ([x, y]: [number, number]) => x >= margin && x <= width - margin && y >= margin && y <= height - margin;
  const blobs = demoTissueBlobs(width, height);
  const onTissue: [number, number][] = blobs.flatMap((b) => {
    const t = (b.angle * Math.PI) / 180;
    const at = (u: number, v: number): [number, number] => [
      b.cx + u * Math.cos(t) - v * Math.sin(t),
      b.cy + u * Math.sin(t) + v * Math.cos(t),
    ];
    return [at(0, 0), at(b.rx * 0.45, 0), at(0, b.ry * 0.45), at(-b.rx * 0.45, 0), at(0, -b.ry * 0.45)];
  });
  // Fields whose disc lies on tissue almost whole come first: a pathologist counts where tissue is.
  const covered = (c: [number, number]) => {
    let inside = 0;
    for (let k = 0; k < 24; k++) {
      const a = (k * Math.PI) / 12;
      const d = k % 2 === 0 ? 1.1 : 0.6;
      if (blobs.some((b) => inBlob(b, c[0] + Math.cos(a) * d * radius, c[1] + Math.sin(a) * d * radius))) inside++;
    }
    return inside / 24;
  };
  const rotate = (list: [number, number][]) => {
    const start = list.length > 0 ? (index * 5) % list.length : 0;
    return [...list.slice(start), ...list.slice(0, start)];
  };
  const candidates = onTissue.filter(fits);
  const ordered = [
    ...rotate(candidates.filter((c) => covered(c) >= 0.9)),
    ...rotate(candidates.filter((c) => covered(c) < 0.9)),
  ];
  for (let y = margin; y <= height - margin; y += radius)
    for (let x = margin; x <= width - margin; x += radius) ordered.push([x, y]);
  const chosen: [number, number][] = [];
  for (const c of ordered) {
    if (chosen.every(([x, y]) => Math.hypot(c[0] - x, c[1] - y) >= radius * 2.1)) chosen.push(c);
    if (chosen.length === FIELDS) return chosen;
  }
  throw new Error(`The demo slide (${width}×${height}) has no room for ${FIELDS} HPFs of radius ${radius}`);
}

/**
 * One reader's HPFs and eosinophil points as create requests: field i's HPF, shifted by the
 * reader's READER_SHIFTS, holding `counts[i]` points within 0.85 of its radius, on tissue where the
 * slide has it (seeded: the same on every start).
 */
function readerDrawing(
  image: AnnotatedImage & { width: number; height: number },
  fields: readonly [number, number][],
  radius: number,
  slot: number,
  counts: readonly number[],
  classes: { hpf: number | null; eosinophil: number },
  seed: number,
): CreateAnnotationRequest[] {
  const rnd = seededRandom(seed);
  const blobs = demoTissueBlobs(image.width, image.height);
  const [shiftX, shiftY] = READER_SHIFTS[slot % READER_SHIFTS.length] ?? [0, 0];
  const point = (x: number, y: number, classId: number | null, type: 'HPF' | 'POINT'): CreateAnnotationRequest => ({
    imageId: image.id,
    annotationType: type,
    geometry: { type: 'Point', coordinates: [Math.round(x * 10) / 10, Math.round(y * 10) / 10] },
    annotationClassId: classId,
  });
  const hpfs: CreateAnnotationRequest[] = [];
  const points: CreateAnnotationRequest[] = [];
  counts.forEach((count, i) => {
    const field = fields[i % fields.length] ?? [image.width / 2, image.height / 2];
    const cx = field[0] + shiftX * radius;
    const cy = field[1] + shiftY * radius;
    hpfs.push(point(cx, cy, classes.hpf, 'HPF'));
    for (let n = 0; n < count; n++) {
      let x = cx;
      let y = cy;
      for (let attempt = 0; attempt < 40; attempt++) {
        const a = rnd() * Math.PI * 2;
        const d = Math.sqrt(rnd()) * radius * 0.85;
        x = cx + Math.cos(a) * d;
        y = cy + Math.sin(a) * d;
        if (blobs.some((b) => inBlob(b, x, y))) break;
      }
      points.push(point(x, y, classes.eosinophil, 'POINT'));
    }
  });
  return [...hpfs, ...points];
}

interface Person {
  principal: Principal;
  actor: Actor;
}

/**
 * At the first start with demo data, right after the demo cases are created: the read-outcomes
 * study's reads done as its readers would do them (DEMO_OUTCOME_CASES). Each reader's HPFs and
 * eosinophils are drawn on the case's slide through the annotation service (prepared, parented and
 * audited as theirs) and the case is marked scored through CaseService.forward — which freezes the
 * read's values from those annotations, completes the case or sends it to adjudication; the ISC
 * assigns the adjudicator through CaseService.assignAdjudicator. Only a case nobody has drawn on is
 * read. Returns the number of reads marked.
 */
export async function playDemoReads(db: Db): Promise<number> {
  const study = await db
    .selectFrom('studies')
    .select('id')
    .where('name', '=', DEMO_OUTCOMES_STUDY.name)
    .executeTakeFirst();
  if (!study) return 0;
  const studyClassMap = await studyClasses(db, study.id);
  const classes = [...studyClassMap.values()].filter((c) => !c.deleted);
  const eosinophil = classes.find((c) => c.type === 'POINT' && c.name === 'Eosinophil')?.id;
  if (eosinophil === undefined) return 0;
  const hpfClass = classes.find((c) => c.type === 'HPF')?.id ?? null;

  const people = new Map<string, Person>();
  const person = async (username: string): Promise<Person> => {
    const known = people.get(username);
    if (known) return known;
    const user = await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow();
    const principal = await loadPrincipal(db, user.id);
    if (!principal) throw new Error(`The demo user ${username} is not active`);
    const actor: Actor = {
      userId: principal.id,
      username: principal.username,
      workAsRole: principal.workAsRole?.name ?? null,
      requestId: null,
      clientIp: null,
    };
    people.set(username, { principal, actor });
    return { principal, actor };
  };
  const cases = new CaseService(db);
  const annotations = new AnnotationService(db);

  let marked = 0;
  for (const [index, plan] of DEMO_OUTCOME_CASES.entries()) {
    const found = await db
      .selectFrom('cases')
      .innerJoin('images', 'images.case_id', 'cases.id')
      .select(['cases.id as caseId', 'images.id as imageId'])
      .where('cases.study_id', '=', study.id)
      .where('cases.proc_id', '=', plan.procId)
      .where('cases.status', '=', 'PROCESSED')
      .where('images.status', '!=', 'ARCHIVED')
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('annotations').select('id').whereRef('annotations.image_id', '=', 'images.id'))),
      )
      .orderBy('images.id')
      .executeTakeFirst();
    if (!found) continue;
    const image = await annotatedImage(db, found.imageId);
    const { width, height } = image;
    if (width === null || height === null) continue;
    // The radius the server gives this slide's HPFs (from its pixel size), so the points fall inside.
    const radius = hpfRadiusPx(image.mpp, isNashStudy(image.indications));
    const fields = fieldCentres(width, height, radius, index);
    const draw = async (who: Person, slot: number, pec: number, scored: boolean) => {
      const requests = readerDrawing(
        { ...image, width, height },
        fields,
        radius,
        slot,
        hpfCounts(pec, scored),
        { hpf: hpfClass, eosinophil },
        4000 + index * 10 + slot,
      );
      const prepared = requests.map((r) => prepareAnnotation(r, image, studyClassMap));
      await db.transaction().execute(async (tx) => {
        const { ids } = await annotations.insert(tx, who.principal.id, image, prepared);
        await recordAudit(
          tx,
          who.actor,
          prepared.map((p, k) => createdEvent(image, ids[k] ?? 0, p)),
        );
      });
      if (!scored) return;
      await cases.forward(who.principal, who.actor, found.caseId);
      marked += 1;
    };
    for (const [slot, read] of plan.reads.entries()) await draw(await person(read.reader), slot, read.pec, read.scored);
    if (plan.adjudicator) {
      const adjudicator = await person(plan.adjudicator.reader);
      await cases.assignAdjudicator((await person('isc')).actor, found.caseId, { readerId: adjudicator.principal.id });
      await draw(adjudicator, plan.reads.length, plan.adjudicator.pec, true);
    }
  }
  return marked;
}
