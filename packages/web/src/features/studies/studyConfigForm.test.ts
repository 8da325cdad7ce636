import {
  ENDPOINT_MESSAGES,
  STUDY_MESSAGES,
  classNotInStudy,
  endpointKeyUnknown,
  withCeliacDefaults,
  type EndpointDefinition,
  type StudyConfig,
} from '@lamina/domain';
import { describe, expect, it } from 'vitest';
import { makeClass, makeStudy } from '../../test/fixtures';
import {
  buildStudyUpdate,
  changedGroups,
  configFromStudy,
  emptyStudyConfig,
  groupsMissingReason,
  studyConfigIssues,
} from './studyConfigForm';

const study = makeStudy({
  pointClasses: [
    makeClass({ id: 2, name: 'Second', sortOrder: 1 }),
    makeClass({ id: 1, name: 'First', sortOrder: 0 }),
    makeClass({ id: 3, name: 'Gone', sortOrder: 2, deleted: true }),
  ],
});
const initial = configFromStudy(study);

describe('configFromStudy', () => {
  it('lists live classes in their order, without the view-only fields', () => {
    expect(initial.pointClasses).toEqual([
      { id: 1, name: 'First', color: '#87FF01', sortOrder: 0, enabled: true, deleted: false },
      { id: 2, name: 'Second', color: '#87FF01', sortOrder: 1, enabled: true, deleted: false },
    ]);
  });
});

describe('changes and their reasons', () => {
  it('groups a lab visit ID change with the visit IDs', () => {
    const current: StudyConfig = { ...initial, labVisitIds: ['L9'] };
    expect(changedGroups(initial, current)).toEqual(['visitIds']);
  });

  it('needs a reason for every changed field, even a first value', () => {
    const current: StudyConfig = { ...initial, sponsor: null, name: 'Renamed' };
    expect(groupsMissingReason(initial, current, {})).toEqual(['name', 'sponsor']);
    expect(groupsMissingReason(initial, current, { name: 'typo', sponsor: '  ' })).toEqual(['sponsor']);
    const first: StudyConfig = { ...initial, protocolIds: [] };
    const back: StudyConfig = { ...first, protocolIds: ['P-2'] };
    expect(groupsMissingReason(first, back, {})).toEqual(['protocolIds']);
  });

  it('sends only the changed fields, each with its reason; lab visit IDs reuse the visit reason', () => {
    const current: StudyConfig = { ...initial, name: 'Renamed', labVisitIds: ['L9'] };
    expect(buildStudyUpdate(initial, current, { name: ' typo ', visitIds: 'lab renumbered' })).toEqual({
      name: { value: 'Renamed', reasonForChange: 'typo' },
      labVisitIds: { value: ['L9'], reasonForChange: 'lab renumbered' },
    });
  });

  it("lets the celiac default classes use the indications' reason", () => {
    const celiac: StudyConfig = { ...initial, indications: ['CELIAC_DISEASE'], ...withCeliacDefaults(initial) };
    expect(groupsMissingReason(initial, celiac, {})).toEqual(['indications', 'pointClasses', 'multilineClasses']);
    expect(groupsMissingReason(initial, celiac, { indications: 'protocol amendment 2' })).toEqual([]);
    const update = buildStudyUpdate(initial, celiac, { indications: 'protocol amendment 2', pointClasses: 'own' });
    expect(update.pointClasses?.reasonForChange).toBe('own');
    expect(update.multilineClasses?.reasonForChange).toBe('protocol amendment 2');
  });
});

describe('studyConfigIssues', () => {
  it("gives the domain's messages for a blank study", () => {
    expect(studyConfigIssues(emptyStudyConfig()).map((i) => i.message)).toEqual([
      STUDY_MESSAGES.nameRequired,
      STUDY_MESSAGES.indicationRequired,
      STUDY_MESSAGES.segmentsRequired,
      STUDY_MESSAGES.modalityRequired,
    ]);
  });

  it('reports schema problems with their field and index', () => {
    const bad: StudyConfig = { ...initial, pointClasses: [{ name: 'X', color: 'red', sortOrder: 0, enabled: true }] };
    expect(studyConfigIssues(bad)).toEqual([
      { field: 'pointClasses', index: 0, message: 'color must be a hex colour such as #87FF01' },
    ]);
  });

  it('flags blank or repeated class names per index', () => {
    const bad: StudyConfig = {
      ...initial,
      hpfClasses: [
        { name: 'A', color: '#87FF01', sortOrder: 0, enabled: true },
        { name: ' a ', color: '#87FF01', sortOrder: 1, enabled: true },
      ],
    };
    expect(studyConfigIssues(bad)).toEqual([
      { field: 'hpfClasses', index: 1, message: STUDY_MESSAGES.classNameInvalid },
    ]);
  });
});

describe('read outcomes (issue 30)', () => {
  const pec: EndpointDefinition = {
    key: 'pec',
    label: 'PEC',
    kind: 'PEAK_COUNT_PER_HPF',
    className: 'First',
    threshold: 15,
    positiveWhen: 'GTE',
  };
  const outcomes = configFromStudy(
    makeStudy({
      pointClasses: [makeClass({ id: 1, name: 'First' })],
      endpoints: [pec],
      adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' },
      signatures: true,
    }),
  );

  it("configFromStudy copies the study's endpoints, adjudication and signatures; a new study has none", () => {
    expect(outcomes).toMatchObject({
      endpoints: [pec],
      adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' },
      signatures: true,
    });
    expect(emptyStudyConfig()).toMatchObject({ endpoints: [], adjudication: null, signatures: false });
  });

  it('each is its own reason group and is sent with its reason', () => {
    const current: StudyConfig = {
      ...outcomes,
      endpoints: [{ ...pec, threshold: 20 }],
      adjudication: null,
      signatures: false,
    };
    expect(changedGroups(outcomes, current)).toEqual(['endpoints', 'adjudication', 'signatures']);
    expect(groupsMissingReason(outcomes, current, { endpoints: 'SAP v2' })).toEqual(['adjudication', 'signatures']);
    expect(
      buildStudyUpdate(outcomes, current, { endpoints: 'SAP v2', adjudication: 'none', signatures: 'off' }),
    ).toEqual({
      endpoints: { value: [{ ...pec, threshold: 20 }], reasonForChange: 'SAP v2' },
      adjudication: { value: null, reasonForChange: 'none' },
      signatures: { value: false, reasonForChange: 'off' },
    });
  });

  it("gives the domain's endpoint messages on their endpoint's index, the adjudication's on it", () => {
    const bad: StudyConfig = {
      ...outcomes,
      endpoints: [
        { ...pec, key: 'Bad key' },
        { ...pec, key: 'other', className: 'Gone' },
      ],
    };
    expect(studyConfigIssues(bad)).toEqual([
      { field: 'endpoints', index: 0, message: ENDPOINT_MESSAGES.keyInvalid },
      { field: 'endpoints', index: 1, message: classNotInStudy('Gone', ['First']) },
      { field: 'adjudication', message: endpointKeyUnknown('pec', ['Bad key', 'other']) },
    ]);
  });
});
