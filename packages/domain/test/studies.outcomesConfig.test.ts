import { describe, expect, it } from 'vitest';
import {
  ENDPOINT_MESSAGES,
  STUDY_MESSAGES,
  categoryNeedsThreshold,
  classNotInStudy,
  endpointKeyUnknown,
  installZodMessages,
  studyConfigSchema,
  studyCreateSchema,
  studyReasonForChangeError,
  studyReasonGroupOf,
  studyUpdateSchema,
  studyViewSchema,
  validateStudyConfig,
  type AnnotationClassInput,
  type EndpointDefinition,
  type StudyConfig,
} from '../src/index.js';

// Issue 30's configuration slice: the study configuration carries the read-outcome endpoints, the
// adjudication rule and the signatures switch, checked by the rules endpoints.ts states.

installZodMessages();

const cls = (name: string, extra: Partial<AnnotationClassInput> = {}): AnnotationClassInput => ({
  name,
  color: '#87FF01',
  sortOrder: 0,
  enabled: true,
  ...extra,
});

const pec: EndpointDefinition = {
  key: 'pec',
  label: 'Peak eosinophil count',
  kind: 'PEAK_COUNT_PER_HPF',
  className: 'Eosinophil',
  threshold: 15,
  positiveWhen: 'GTE',
};
const vhcd: EndpointDefinition = { key: 'vh_cd', label: 'Vh:Cd', kind: 'VH_CD_RATIO' };

const base = (over: Partial<StudyConfig> = {}): StudyConfig => ({
  name: 'EoE-001',
  sponsor: null,
  protocolIds: [],
  visitIds: [],
  labVisitIds: [],
  indications: ['EOSINOPHILIC_ESOPHAGITIS'],
  segments: 1,
  anatomicalSegments: ['Esophagus'],
  modality: ['HISTOPATHOLOGY'],
  onHold: false,
  onHoldReason: null,
  hpfClasses: [],
  pointClasses: [cls('Eosinophil'), cls('Neutrophil', { sortOrder: 1 })],
  freehandClasses: [],
  multilineClasses: [],
  endpoints: [],
  adjudication: null,
  signatures: false,
  ...over,
});

const firstMessage = (result: { error?: { issues: { message: string }[] } }) => result.error?.issues[0]?.message;

describe('studyConfigSchema: endpoints, adjudication, signatures', () => {
  it('defaults to no endpoints, no adjudication and signatures off', () => {
    const rest: Partial<StudyConfig> = base();
    delete rest.endpoints;
    delete rest.adjudication;
    delete rest.signatures;
    const parsed = studyConfigSchema.parse(rest);
    expect(parsed.endpoints).toEqual([]);
    expect(parsed.adjudication).toBeNull();
    expect(parsed.signatures).toBe(false);
    expect(studyCreateSchema.parse(rest)).toMatchObject({ endpoints: [], adjudication: null, signatures: false });
  });

  it('keeps a valid configuration as given', () => {
    const config = base({
      endpoints: [pec, vhcd],
      adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' },
      signatures: true,
    });
    expect(studyConfigSchema.parse(config)).toEqual(config);
    expect(validateStudyConfig(config)).toEqual([]);
  });

  it("refuses with the endpoint rules' own messages", () => {
    expect(firstMessage(studyConfigSchema.safeParse(base({ endpoints: [{ ...pec, key: 'PEC' }] })))).toBe(
      ENDPOINT_MESSAGES.keyInvalid,
    );
    expect(firstMessage(studyConfigSchema.safeParse(base({ endpoints: [pec, { ...vhcd, key: 'pec' }] })))).toBe(
      ENDPOINT_MESSAGES.keysNotUnique,
    );
    const noClass: Partial<EndpointDefinition> = { ...pec };
    delete noClass.className;
    expect(firstMessage(studyConfigSchema.safeParse(base({ endpoints: [noClass as EndpointDefinition] })))).toBe(
      ENDPOINT_MESSAGES.classNameRequired,
    );
    const noPositiveWhen: Partial<EndpointDefinition> = { ...pec };
    delete noPositiveWhen.positiveWhen;
    expect(firstMessage(studyConfigSchema.safeParse(base({ endpoints: [noPositiveWhen as EndpointDefinition] })))).toBe(
      ENDPOINT_MESSAGES.thresholdPair,
    );
    expect(
      firstMessage(
        studyConfigSchema.safeParse(
          base({ endpoints: [pec], adjudication: { endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE' } }),
        ),
      ),
    ).toBe(ENDPOINT_MESSAGES.valueRequired);
    expect(firstMessage(studyConfigSchema.safeParse({ ...base(), signatures: 'yes' }))).toBe(
      'signatures must be boolean',
    );
  });
});

describe('validateStudyConfig: the rules the schema cannot know alone', () => {
  it('refuses an endpoint class that is not one of the point classes, on that endpoint', () => {
    const config = base({ endpoints: [vhcd, { ...pec, className: 'Eos' }] });
    expect(validateStudyConfig(config)).toEqual([
      { field: 'endpoints', index: 1, message: classNotInStudy('Eos', ['Eosinophil', 'Neutrophil']) },
    ]);
  });

  it('counts only the point classes that are not deleted, by their stored (trimmed) names', () => {
    const deleted = base({
      pointClasses: [cls('Eosinophil', { id: 1, deleted: true }), cls('Neutrophil', { id: 2 })],
      endpoints: [pec],
    });
    expect(validateStudyConfig(deleted)).toEqual([
      { field: 'endpoints', index: 0, message: classNotInStudy('Eosinophil', ['Neutrophil']) },
    ]);
    // A disabled class is still one of the study's classes; a name is compared as the server stores it.
    const disabled = base({ pointClasses: [cls(' Eosinophil ', { enabled: false })], endpoints: [pec] });
    expect(validateStudyConfig(disabled)).toEqual([]);
    // Classes of the other lists do not count.
    const hpfOnly = base({ pointClasses: [], hpfClasses: [cls('Eosinophil')], endpoints: [pec] });
    expect(validateStudyConfig(hpfOnly)).toEqual([
      { field: 'endpoints', index: 0, message: classNotInStudy('Eosinophil', []) },
    ]);
  });

  it('refuses an adjudication on an unknown endpoint, or on categories without a threshold', () => {
    expect(
      validateStudyConfig(
        base({ endpoints: [vhcd], adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' } }),
      ),
    ).toEqual([{ field: 'adjudication', message: endpointKeyUnknown('pec', ['vh_cd']) }]);
    expect(
      validateStudyConfig(
        base({ endpoints: [vhcd], adjudication: { endpointKey: 'vh_cd', rule: 'CATEGORY_DISAGREES' } }),
      ),
    ).toEqual([{ field: 'adjudication', message: categoryNeedsThreshold('vh_cd') }]);
    expect(
      validateStudyConfig(
        base({ endpoints: [vhcd], adjudication: { endpointKey: 'vh_cd', rule: 'ABS_DIFF_ABOVE', value: 0.5 } }),
      ),
    ).toEqual([]);
  });

  it('comes after the configuration rules of spec doc 1 §5 (the server refuses with the first issue)', () => {
    const issues = validateStudyConfig(
      base({
        name: ' ',
        endpoints: [{ ...pec, className: 'Eos' }],
        adjudication: { endpointKey: 'x', rule: 'CATEGORY_DISAGREES' },
      }),
    );
    expect(issues.map((i) => i.field)).toEqual(['name', 'endpoints', 'adjudication']);
  });
});

describe('studyUpdateSchema and reasons for change', () => {
  it('takes each of the three as a changed value with its reason', () => {
    const update = {
      endpoints: { value: [pec], reasonForChange: 'SAP v2' },
      adjudication: { value: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' }, reasonForChange: 'SAP v2' },
      signatures: { value: true, reasonForChange: 'Part 11' },
    };
    expect(studyUpdateSchema.parse(update)).toEqual(update);
    expect(studyUpdateSchema.parse({ adjudication: { value: null } })).toEqual({ adjudication: { value: null } });
    expect(firstMessage(studyUpdateSchema.safeParse({ endpoints: { value: [{ ...pec, key: 'a b' }] } }))).toBe(
      ENDPOINT_MESSAGES.keyInvalid,
    );
  });

  it('gives each its own reason group, and needs a reason for every change of them', () => {
    expect(studyReasonGroupOf('endpoints')).toBe('endpoints');
    expect(studyReasonGroupOf('adjudication')).toBe('adjudication');
    expect(studyReasonGroupOf('signatures')).toBe('signatures');
    expect(studyReasonForChangeError([], [pec], null)).toBe(STUDY_MESSAGES.reasonForChangeRequired);
    expect(studyReasonForChangeError(false, true, ' ')).toBe(STUDY_MESSAGES.reasonForChangeRequired);
    expect(studyReasonForChangeError(null, { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' }, 'SAP')).toBeNull();
  });
});

describe('studyViewSchema', () => {
  it('carries the three fields as the server stores them', () => {
    const { endpoints, adjudication, signatures } = studyViewSchema.shape;
    expect(endpoints.parse([pec, vhcd])).toEqual([pec, vhcd]);
    expect(adjudication.parse(null)).toBeNull();
    expect(adjudication.parse({ endpointKey: 'pec', rule: 'ABS_DIFF_ABOVE', value: 5 })).toEqual({
      endpointKey: 'pec',
      rule: 'ABS_DIFF_ABOVE',
      value: 5,
    });
    expect(signatures.safeParse(undefined).success).toBe(false);
  });
});
