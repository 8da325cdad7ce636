import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  ANNOTATION_CLASS_LIST_NAMES,
  CELIAC_DEFAULT_LINE_CLASSES,
  CELIAC_DEFAULT_POINT_CLASSES,
  INDICATIONS,
  STUDY_MESSAGES,
  canAddVisitPair,
  installZodMessages,
  isIndicationDisabled,
  selectIndications,
  studyCreateSchema,
  studyListKind,
  studyListQuerySchema,
  studyReasonForChangeError,
  studyUpdateSchema,
  studyUserGroup,
  userListQuerySchema,
  validateStudyConfig,
  visitPairIssues,
  withCeliacDefaults,
  withoutCeliacDefaults,
  hasNewCeliacDefaults,
  MAX_ANATOMICAL_SEGMENTS,
  type AnnotationClassInput,
  type Indication,
  type StudyConfig,
  coveringStudyReason,
  STUDY_REASON_GROUPS,
  studyReasonGroupOf,
  studyConfigSchema,
  type StudyReasonGroup,
} from '../src/index.js';

installZodMessages();

const base = (): StudyConfig => ({
  name: 'UC-001',
  sponsor: 'Acme',
  protocolIds: ['P-1'],
  visitIds: ['V1'],
  labVisitIds: ['L1'],
  indications: ['ULCERATIVE_COLITIS'],
  segments: 2,
  anatomicalSegments: ['Colon', 'Rectum'],
  modality: ['HISTOPATHOLOGY'],
  onHold: false,
  onHoldReason: null,
  hpfClasses: [],
  pointClasses: [],
  freehandClasses: [],
  multilineClasses: [],
  endpoints: [],
  adjudication: null,
  signatures: false,
});
const cls = (name: string, extra: Partial<AnnotationClassInput> = {}): AnnotationClassInput => ({
  name,
  color: '#87FF01',
  sortOrder: 0,
  enabled: true,
  ...extra,
});
const messages = (config: StudyConfig) => validateStudyConfig(config).map((i) => i.message);

describe('validateStudyConfig (spec doc 1 §5)', () => {
  it('passes a complete configuration', () => {
    expect(validateStudyConfig(base())).toEqual([]);
  });

  it.each<[string, Partial<StudyConfig>, string]>([
    ['name', { name: '  ' }, 'Name is required'],
    ['indication', { indications: [] }, 'Indication is required'],
    ['segments missing', { segments: null }, 'Number of Anatomical Segments is required'],
    ['segments zero', { segments: 0 }, STUDY_MESSAGES.segmentsRange],
    ['segments fraction', { segments: 1.5 }, STUDY_MESSAGES.segmentsRange],
    ['segment names', { segments: 3 }, 'Enter one name per segment (3)'],
    ['blank segment name', { segments: 2, anatomicalSegments: ['Ileum', '  '] }, 'Enter one name per segment (2)'],
    ['modality', { modality: [] }, 'Modality is required'],
    ['hold reason', { onHold: true, onHoldReason: ' ' }, 'On Hold Reason is required'],
    [
      'hold reason length',
      { onHold: true, onHoldReason: 'x'.repeat(179) },
      'On Hold Reason must be at most 178 characters',
    ],
    ['NASH alone', { indications: ['NASH', 'POUCHITIS'] }, 'Studies only support one indication.'],
    ['celiac alone', { indications: ['POUCHITIS', 'CELIAC_DISEASE'] }, 'Studies only support one indication.'],
    ['class names', { hpfClasses: [cls('A'), cls(' a ')] }, 'name is blank or not unique'],
    ['blank class', { freehandClasses: [cls('')] }, 'name is blank or not unique'],
    [
      'visit pair',
      { visitIds: ['V1', 'V1'], labVisitIds: ['L1', 'L1'] },
      'The Visit ID / Lab Visit ID pair must be unique',
    ],
  ])('%s', (_label, over, message) => {
    expect(messages({ ...base(), ...over })).toContain(message);
  });

  it('accepts 178 characters of hold reason and ignores deleted classes', () => {
    expect(
      messages({
        ...base(),
        onHold: true,
        onHoldReason: 'x'.repeat(178),
        pointClasses: [cls('A'), cls('A', { deleted: true })],
      }),
    ).toEqual([]);
  });

  const liveName = fc.constantFrom('IEL', 'Enterocyte', 'Crypt', 'Villus', 'Unit 1');
  const variant = (name: string) => fc.constantFrom(name, name.toLowerCase(), ` ${name.toUpperCase()} `, `${name}  `);

  it('never passes a list holding two live classes with the same name (any case, any surrounding space)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ANNOTATION_CLASS_LIST_NAMES),
        liveName.chain((name) => fc.tuple(variant(name), variant(name))),
        fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 4 }),
        fc.nat(),
        (list, [first, second], others, seed) => {
          const classes = [...others.map((o) => cls(`x-${o}`)), cls(first), cls(second)];
          // Shuffle deterministically so the duplicate may sit anywhere.
          const shuffled = classes
            .map((c, i) => ({ c, k: (i * 7919 + seed) % 101 }))
            .sort((a, b) => a.k - b.k)
            .map(({ c }) => c);
          const issues = validateStudyConfig({ ...base(), [list]: shuffled });
          return issues.some((i) => i.field === list && i.message === STUDY_MESSAGES.classNameInvalid);
        },
      ),
    );
  });

  it('passes lists of distinct non-blank names, whatever their order and flags', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,10}$/), {
          selector: (s) => s.trim().toLowerCase(),
          maxLength: 6,
        }),
        fc.boolean(),
        (names, enabled) => {
          const list = names.map((n, i) => cls(n, { sortOrder: names.length - i, enabled }));
          return validateStudyConfig({ ...base(), pointClasses: list, multilineClasses: list }).length === 0;
        },
      ),
    );
  });
});

describe('visit pairs', () => {
  it('pairs by position; a lab visit ID is used once; a visit may repeat with other lab visits', () => {
    expect(visitPairIssues(['V1', 'V1'], ['L1', 'L2'])).toEqual([]);
    expect(visitPairIssues(['V1', 'V2'], ['', ''])).toEqual([]);
    expect(visitPairIssues(['V1', 'V2'], ['L1', 'L1']).map((i) => i.message)).toEqual([
      'The Visit ID / Lab Visit ID pair must be unique',
    ]);
    expect(canAddVisitPair(['V1'], ['L1'], ' ', 'L2')).toBe('Visit ID is required');
    expect(canAddVisitPair(['V1'], ['L1'], 'V1', 'L1')).toBe('The Visit ID / Lab Visit ID pair must be unique');
    expect(canAddVisitPair(['V1'], ['L1'], 'V2', '')).toBeNull();
  });
});

describe('indication selection', () => {
  it('choosing NASH or celiac leaves only it; others combine', () => {
    expect(selectIndications(['CROHNS_DISEASE'], ['CROHNS_DISEASE', 'NASH'])).toEqual(['NASH']);
    expect(selectIndications(['CROHNS_DISEASE'], ['CROHNS_DISEASE', 'CELIAC_DISEASE'])).toEqual(['CELIAC_DISEASE']);
    expect(selectIndications(['CROHNS_DISEASE'], ['CROHNS_DISEASE', 'POUCHITIS'])).toEqual([
      'CROHNS_DISEASE',
      'POUCHITIS',
    ]);
    expect(selectIndications(['NASH'], [])).toEqual([]);
  });

  it('disables NASH and celiac once another indication is chosen, and everything else beside them', () => {
    expect(INDICATIONS.filter((i) => isIndicationDisabled([], i))).toEqual([]);
    expect(INDICATIONS.filter((i) => isIndicationDisabled(['POUCHITIS'], i))).toEqual(['NASH', 'CELIAC_DISEASE']);
    expect(INDICATIONS.filter((i) => !isIndicationDisabled(['NASH'], i))).toEqual(['NASH']);
    expect(INDICATIONS.filter((i) => !isIndicationDisabled(['CELIAC_DISEASE'], i))).toEqual(['CELIAC_DISEASE']);
  });

  it('any sequence of clicks on enabled options keeps the one-indication rule', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...INDICATIONS), { maxLength: 20 }), (clicks) => {
        let selected: Indication[] = [];
        for (const clicked of clicks) {
          if (isIndicationDisabled(selected, clicked)) continue;
          const next = selected.includes(clicked) ? selected.filter((i) => i !== clicked) : [...selected, clicked];
          selected = selectIndications(selected, next);
        }
        const config = { ...base(), indications: selected.length > 0 ? selected : (['POUCHITIS'] as Indication[]) };
        return !messages(config).includes(STUDY_MESSAGES.oneIndicationOnly);
      }),
    );
  });
});

describe('withCeliacDefaults', () => {
  it('adds Enterocyte, IEL and Unit 1–5 with the spec colours after the existing classes', () => {
    const result = withCeliacDefaults({ pointClasses: [cls('Goblet')], multilineClasses: [] });
    expect(result.pointClasses.map((c) => [c.name, c.color, c.sortOrder])).toEqual([
      ['Goblet', '#87FF01', 0],
      ['Enterocyte', '#FF9F00', 1],
      ['IEL', '#87FF01', 2],
    ]);
    expect(result.multilineClasses.map((c) => `${c.name} ${c.color}`)).toEqual([
      'Unit 1 #87FF01',
      'Unit 2 #FF001E',
      'Unit 3 #FF9F00',
      'Unit 4 #FDEB03',
      'Unit 5 #013BFA',
    ]);
  });

  it('skips existing live names; a deleted class of that name does not count', () => {
    const result = withCeliacDefaults({
      pointClasses: [cls(' iel '), cls('Enterocyte', { deleted: true })],
      multilineClasses: [cls('UNIT 2')],
    });
    expect(result.pointClasses.map((c) => c.name)).toEqual([' iel ', 'Enterocyte', 'Enterocyte']);
    expect(result.multilineClasses.map((c) => c.name)).toEqual(['UNIT 2', 'Unit 1', 'Unit 3', 'Unit 4', 'Unit 5']);
  });

  it('is idempotent, keeps the given classes, and never creates duplicate live names', () => {
    const names = fc.array(fc.constantFrom('IEL', 'iel', 'Enterocyte', 'Unit 1', 'unit 5', 'Goblet', 'Other'), {
      maxLength: 5,
    });
    fc.assert(
      fc.property(names, names, (point, line) => {
        const input = {
          pointClasses: [...new Set(point.map((n) => n.toLowerCase()))].map((n) => cls(n)),
          multilineClasses: [...new Set(line.map((n) => n.toLowerCase()))].map((n) => cls(n)),
        };
        const once = withCeliacDefaults(input);
        const twice = withCeliacDefaults(once);
        expect(twice).toEqual(once);
        expect(once.pointClasses.slice(0, input.pointClasses.length)).toEqual(input.pointClasses);
        const config = { ...base(), indications: ['CELIAC_DISEASE'] as Indication[], ...once };
        expect(messages(config)).toEqual([]);
        const lower = (list: AnnotationClassInput[]) => list.map((c) => c.name.toLowerCase());
        for (const d of CELIAC_DEFAULT_POINT_CLASSES) expect(lower(once.pointClasses)).toContain(d.name.toLowerCase());
        for (const d of CELIAC_DEFAULT_LINE_CLASSES)
          expect(lower(once.multilineClasses)).toContain(d.name.toLowerCase());
      }),
    );
  });
});

describe('withoutCeliacDefaults (issue 20: unchoosing celiac takes its defaults back)', () => {
  const added = () => withCeliacDefaults({ pointClasses: [cls('Goblet')], multilineClasses: [] });

  it('removes the defaults as added, and keeps the user’s own classes', () => {
    const result = withoutCeliacDefaults(added());
    expect(result.pointClasses.map((c) => [c.name, c.sortOrder])).toEqual([['Goblet', 0]]);
    expect(result.multilineClasses).toEqual([]);
  });

  it('keeps a default the user renamed, recoloured or disabled, and one already saved', () => {
    const lists = added();
    lists.pointClasses[1] = { ...lists.pointClasses[1]!, name: 'Enterocytes' };
    lists.pointClasses[2] = { ...lists.pointClasses[2]!, color: '#000000' };
    lists.multilineClasses[0] = { ...lists.multilineClasses[0]!, enabled: false };
    lists.multilineClasses[1] = { ...lists.multilineClasses[1]!, id: 17 };
    const result = withoutCeliacDefaults(lists);
    expect(result.pointClasses.map((c) => c.name)).toEqual(['Goblet', 'Enterocytes', 'IEL']);
    expect(result.multilineClasses.map((c) => c.name)).toEqual(['Unit 1', 'Unit 2']);
  });

  it('the server refuses a study that is not celiac with every default new and untouched', () => {
    const lists = added();
    expect(hasNewCeliacDefaults(lists)).toBe(true);
    expect(messages({ ...base(), ...lists })).toContain(STUDY_MESSAGES.celiacDefaultsWithoutCeliac);
    expect(messages({ ...base(), indications: ['CELIAC_DISEASE'], ...lists })).toEqual([]);
    // Kept on purpose (one edited), or saved before: allowed.
    const edited = {
      ...lists,
      pointClasses: lists.pointClasses.map((c) => (c.name === 'IEL' ? { ...c, name: 'IEL+' } : c)),
    };
    expect(hasNewCeliacDefaults(edited)).toBe(false);
    const saved = { ...lists, multilineClasses: lists.multilineClasses.map((c, i) => ({ ...c, id: i + 1 })) };
    expect(messages({ ...base(), ...saved })).toEqual([]);
  });
});

describe('Number of Anatomical Segments (issue 20: the product’s words, never hidden)', () => {
  it.each([
    [null, STUDY_MESSAGES.segmentsRequired],
    [0, STUDY_MESSAGES.segmentsRange],
    [-1, STUDY_MESSAGES.segmentsRange],
    [1.5, STUDY_MESSAGES.segmentsRange],
    [MAX_ANATOMICAL_SEGMENTS + 1, STUDY_MESSAGES.segmentsRange],
  ])('%s → %s', (segments, message) => {
    expect(messages({ ...base(), segments, anatomicalSegments: [] })).toContain(message);
    expect(STUDY_MESSAGES.segmentsRange).toBe(
      `Number of Anatomical Segments must be a whole number from 1 to ${MAX_ANATOMICAL_SEGMENTS}`,
    );
  });

  it('a fractional count passes the schema, so the rule’s message is the one shown', () => {
    expect(studyConfigSchema.safeParse({ ...base(), segments: 1.5 }).success).toBe(true);
  });
});

describe('reason for change on a study', () => {
  it('is required for every changed field, even one that was empty', () => {
    expect(studyReasonForChangeError('A', 'B', undefined)).toBe('Reason for change is required');
    expect(studyReasonForChangeError(null, 'B', ' ')).toBe('Reason for change is required');
    expect(studyReasonForChangeError([], ['V1'], null)).toBe('Reason for change is required');
    expect(studyReasonForChangeError('A', 'B', 'typo')).toBeNull();
    expect(studyReasonForChangeError(['x'], ['x'], undefined)).toBeNull();
  });
});

describe('kinds of user and study user lists', () => {
  it('maps the role worked as to the studies list kind, and study access roles to the study’s user lists', () => {
    expect(['CR', 'NOTO', 'UPLOADER', 'Site', 'LabTech', 'StudyAdmin', undefined].map((r) => studyListKind(r))).toEqual(
      ['reader', 'reader', 'uploader', 'uploader', 'admin', 'admin', 'admin'],
    );
    expect(
      ['UPLOADER', 'LabTech', 'Site', 'CR', 'NOTO', 'ISC', 'DM', 'PM', 'SPONSOR', 'LIS'].map(studyUserGroup),
    ).toEqual([
      'uploaders',
      'uploaders',
      'uploaders',
      'readers',
      'readers',
      'readonlyUsers',
      'readonlyUsers',
      'readonlyUsers',
      'readonlyUsers',
      'readonlyUsers',
    ]);
  });
});

describe('API schemas', () => {
  it("reject unknown enumeration values with 'Cannot decode … from …'", () => {
    expect(studyCreateSchema.safeParse({ ...base(), indications: ['FLU'] }).error?.issues[0]?.message).toBe(
      'Cannot decode indications.0 from FLU',
    );
    expect(studyUpdateSchema.safeParse({ modality: { value: ['XRAY'] } }).error?.issues[0]?.message).toBe(
      'Cannot decode modality.value.0 from XRAY',
    );
    expect(studyListQuerySchema.safeParse({ sort: 'x' }).error?.issues[0]?.message).toBe('Cannot decode sort from x');
  });

  it('read a missing segment count as empty, so the spec message answers', () => {
    const rest: Partial<StudyConfig> = base();
    delete rest.segments;
    const parsed = studyCreateSchema.parse(rest);
    expect(parsed.segments).toBeNull();
    expect(messages(parsed)).toContain('Number of Anatomical Segments is required');
  });

  it('accept page sizes 10, 20, 50, 100 only, and default the sorts', () => {
    expect(studyListQuerySchema.parse({ pageSize: 50, page: 2 })).toEqual({
      pageSize: 50,
      page: 2,
      sort: '-createdAt',
    });
    expect(studyListQuerySchema.safeParse({ pageSize: 25 }).error?.issues[0]?.message).toBe(
      'pageSize must be one of 10, 20, 50, 100',
    );
    // Numbers are numbers (issue 26): the server reads a query string's text as one (params.ts).
    expect(studyListQuerySchema.safeParse({ pageSize: '50' }).error?.issues[0]?.message).toBe(
      'pageSize must be number',
    );
    expect(userListQuerySchema.parse({}).sort).toBe('username');
    expect(userListQuerySchema.safeParse({ exclude: '1, 2,3' }).success).toBe(true);
    expect(userListQuerySchema.safeParse({ exclude: '1;2' }).success).toBe(false);
  });
});

describe('the reason that covers a study field (server and form alike)', () => {
  const given =
    (reasons: Partial<Record<StudyReasonGroup, string>>) =>
    (group: StudyReasonGroup): string | undefined =>
      reasons[group];

  it('is the reason of the field’s group: lab visits share the visits’ reason, segment names the segments’', () => {
    expect(studyReasonGroupOf('labVisitIds')).toBe('visitIds');
    expect(coveringStudyReason('labVisitIds', given({ visitIds: 'week 12 added' }), false)).toBe('week 12 added');
    expect(coveringStudyReason('anatomicalSegments', given({ segments: ' two segments ' }), false)).toBe(
      'two segments',
    );
    expect(coveringStudyReason('name', given({ sponsor: 'x' }), false)).toBeNull();
    expect(coveringStudyReason('name', given({ name: '   ' }), false)).toBeNull();
  });

  it('for the class lists the celiac defaults fill, the indications’ reason when celiac was just chosen', () => {
    const reasons = given({ indications: 'celiac arm' });
    expect(coveringStudyReason('pointClasses', reasons, true)).toBe('celiac arm');
    expect(coveringStudyReason('multilineClasses', reasons, true)).toBe('celiac arm');
    expect(coveringStudyReason('hpfClasses', reasons, true)).toBeNull();
    expect(coveringStudyReason('pointClasses', reasons, false)).toBeNull();
  });

  it('every configuration field belongs to exactly one group', () => {
    const fields = Object.values(STUDY_REASON_GROUPS).flat();
    expect(new Set(fields).size).toBe(fields.length);
    expect([...fields].sort()).toEqual(Object.keys(studyConfigSchema.shape).sort());
  });
});
