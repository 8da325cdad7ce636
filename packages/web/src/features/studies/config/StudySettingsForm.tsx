import { Button, Callout, Section, SectionCard } from '@blueprintjs/core';
import {
  withCeliacDefaults,
  withoutCeliacDefaults,
  type AnnotationClassList,
  type Indication,
  type StudyConfig,
  type StudyView,
  TEXT_LIMITS,
} from '@lamina/domain';
import { useState, type SyntheticEvent } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../../api/ApiError';
import { useSaveStudy, type SaveStudyInput } from '../api';
import {
  buildStudyUpdate,
  changedGroups,
  classCounts,
  configFromStudy,
  emptyStudyConfig,
  groupsMissingReason,
  reasonGroupOf,
  studyConfigIssues,
  studyConfigResolver,
  type ReasonGroup,
  type Reasons,
  type StudyField,
} from '../studyConfigForm';
import { AnnotationClassListField } from './AnnotationClassListField';
import type { ReasonProps } from './ConfigField';
import { ProtocolIdsField } from './ProtocolIdsField';
import { ReadOutcomesFields } from './ReadOutcomesFields';
import { IndicationsField, ModalityField, OnHoldField, SegmentsField, TextField } from './SimpleFields';
import { VisitPairsField } from './VisitPairsField';
import { SaveBlockers, saveBlockerGroups } from '../../../components/SaveBlockers';

/** The label each reason group's field shows (the Save blockers name them). */
const GROUP_LABELS: Readonly<Record<ReasonGroup, string>> = {
  name: 'Name',
  sponsor: 'Sponsor',
  protocolIds: 'Protocol IDs',
  visitIds: 'Visit IDs / Lab Visit IDs',
  indications: 'Indications',
  segments: 'Number of Anatomical Segments',
  modality: 'Modality',
  onHold: 'On hold',
  hpfClasses: 'HPF classes',
  pointClasses: 'Point classes',
  freehandClasses: 'Freehand classes',
  multilineClasses: 'Line measurement classes',
  endpoints: 'Endpoints',
  adjudication: 'Adjudication',
  signatures: 'Electronic signatures',
};

const CLASS_LISTS: readonly { list: AnnotationClassList; label: string }[] = [
  { list: 'hpfClasses', label: 'HPF' },
  { list: 'pointClasses', label: 'Point' },
  { list: 'freehandClasses', label: 'Freehand' },
  { list: 'multilineClasses', label: 'Line measurement' },
];

interface StudySettingsFormProps {
  /** The study being edited; absent when creating one. */
  study?: StudyView;
}

/**
 * The Settings tab of study configuration (doc 1 §2.6). The form holds a StudyConfig; the domain's
 * schema and rules give every message, as the server would. For an existing study each changed field
 * shows a 'Reason for change' beside it, and Save waits until every needed reason is there.
 */
export function StudySettingsForm({ study }: StudySettingsFormProps) {
  const navigate = useNavigate();
  const [initial] = useState<StudyConfig>(() => (study ? configFromStudy(study) : emptyStudyConfig()));
  const [counts] = useState(() => classCounts(study));
  const [reasons, setReasons] = useState<Reasons>({});
  /**
   * Groups whose messages show: on a new study only those the user has changed or was sent to (no
   * red 'Name is required' on an empty form); on an existing study all.
   */
  const [touched, setTouched] = useState<ReadonlySet<ReasonGroup>>(() => new Set());
  const { control, setValue, handleSubmit } = useForm<StudyConfig>({
    defaultValues: initial,
    resolver: studyConfigResolver,
  });
  const values = { ...initial, ...useWatch({ control }) } as StudyConfig;
  const save = useSaveStudy();

  const isNew = study === undefined;
  const issues = studyConfigIssues(values);
  const changed = isNew ? [] : changedGroups(initial, values);
  const missing = isNew ? [] : groupsMissingReason(initial, values, reasons);
  const canSave = issues.length === 0 && missing.length === 0 && (isNew || changed.length > 0) && !save.isPending;

  function set<K extends StudyField>(field: K, value: StudyConfig[K]) {
    setValue(field, value as never, { shouldDirty: true });
    const group = reasonGroupOf(field);
    if (!touched.has(group)) setTouched((current) => new Set(current).add(group));
  }
  const visible = (field: StudyField) => !isNew || touched.has(reasonGroupOf(field));

  function reasonFor(group: ReasonGroup): ReasonProps | null {
    if (!changed.includes(group)) return null;
    const celiacDefaults =
      (group === 'pointClasses' || group === 'multilineClasses') &&
      values.indications.includes('CELIAC_DISEASE') &&
      !initial.indications.includes('CELIAC_DISEASE');
    return {
      value: reasons[group] ?? '',
      onChange: (text) => setReasons((current) => ({ ...current, [group]: text })),
      missing: missing.includes(group),
      placeholder: celiacDefaults ? "The indications' reason, unless given here" : undefined,
    };
  }

  const messages = (...fields: StudyField[]) =>
    issues.filter((i) => fields.includes(i.field) && visible(i.field)).map((i) => i.message);
  const issuesOf = (...fields: StudyField[]) => issues.filter((i) => fields.includes(i.field) && visible(i.field));
  // Why Save is disabled: the fields with problems and the changes without their reason.
  const invalidGroups = [...new Set(issues.map((i) => reasonGroupOf(i.field)))];
  const blocker = (group: ReasonGroup) => ({ key: group, label: GROUP_LABELS[group], anchor: group });

  function handleIndications(next: Indication[]) {
    const had = values.indications.includes('CELIAC_DISEASE');
    const has = next.includes('CELIAC_DISEASE');
    set('indications', next);
    // Choosing Celiac Disease adds its default classes; unchoosing it takes back those still as added.
    const lists = has && !had ? withCeliacDefaults(values) : had && !has ? withoutCeliacDefaults(values) : null;
    if (lists) {
      set('pointClasses', lists.pointClasses);
      set('multilineClasses', lists.multilineClasses);
    }
  }

  const submit = handleSubmit((parsed) => {
    const input: SaveStudyInput = study
      ? { kind: 'update', id: study.id, changes: buildStudyUpdate(initial, parsed, reasons) }
      : { kind: 'create', config: parsed };
    save.mutate(input, { onSuccess: (response) => void navigate(`/studies/${response.study.id}`) });
  });

  function handleSubmitEvent(event: SyntheticEvent<HTMLFormElement>) {
    if (!canSave) {
      event.preventDefault();
      return;
    }
    void submit(event);
  }

  return (
    <form
      className={`lamina-config-form${isNew ? ' lamina-config-form-new' : ''}`}
      onSubmit={handleSubmitEvent}
      noValidate
      aria-label="Study settings"
    >
      <Section title="Study" compact>
        <SectionCard>
          <div data-anchor="name">
            <TextField
              label="Name"
              value={values.name}
              onChange={(v) => set('name', v)}
              issues={messages('name')}
              reason={reasonFor('name')}
              maxLength={TEXT_LIMITS.studyName}
            />
          </div>
          <div data-anchor="sponsor">
            <TextField
              label="Sponsor"
              value={values.sponsor ?? ''}
              onChange={(v) => set('sponsor', v === '' ? null : v)}
              issues={messages('sponsor')}
              reason={reasonFor('sponsor')}
              maxLength={TEXT_LIMITS.sponsor}
            />
          </div>
          <div data-anchor="protocolIds">
            <ProtocolIdsField
              value={values.protocolIds}
              onChange={(v) => set('protocolIds', v)}
              issues={messages('protocolIds')}
              reason={reasonFor('protocolIds')}
            />
          </div>
          <div data-anchor="visitIds">
            <VisitPairsField
              visitIds={values.visitIds}
              labVisitIds={values.labVisitIds}
              onChange={(visitIds, labVisitIds) => {
                set('visitIds', visitIds);
                set('labVisitIds', labVisitIds);
              }}
              issues={issuesOf('visitIds', 'labVisitIds')}
              reason={reasonFor('visitIds')}
            />
          </div>
        </SectionCard>
      </Section>
      <Section title="Indications, segments and modality" compact>
        <SectionCard>
          <div data-anchor="indications">
            <IndicationsField
              value={values.indications}
              onChange={handleIndications}
              issues={messages('indications')}
              reason={reasonFor('indications')}
            />
          </div>
          <div data-anchor="segments">
            <SegmentsField
              value={{ segments: values.segments, anatomicalSegments: values.anatomicalSegments }}
              onChange={(v) => {
                set('segments', v.segments);
                set('anatomicalSegments', v.anatomicalSegments);
              }}
              issues={messages('segments', 'anatomicalSegments')}
              reason={reasonFor('segments')}
            />
          </div>
          <div data-anchor="modality">
            <ModalityField
              value={values.modality}
              onChange={(v) => set('modality', v)}
              issues={messages('modality')}
              reason={reasonFor('modality')}
            />
          </div>
        </SectionCard>
      </Section>
      <Section title="Study status" compact>
        <SectionCard>
          <div data-anchor="onHold">
            <OnHoldField
              value={{ onHold: values.onHold, onHoldReason: values.onHoldReason }}
              onChange={(v) => {
                set('onHold', v.onHold);
                set('onHoldReason', v.onHoldReason);
              }}
              issues={messages('onHold', 'onHoldReason')}
              reason={reasonFor('onHold')}
            />
          </div>
        </SectionCard>
      </Section>
      <Section title="Annotation classes" compact>
        <SectionCard>
          {CLASS_LISTS.map(({ list, label }) => (
            <div key={list} data-anchor={list}>
              <AnnotationClassListField
                label={label}
                value={values[list]}
                onChange={(v) => set(list, v)}
                counts={counts}
                issues={issuesOf(list)}
                reason={reasonFor(list)}
              />
            </div>
          ))}
        </SectionCard>
      </Section>
      <Section title="Read outcomes" compact>
        <SectionCard>
          <ReadOutcomesFields
            value={{ endpoints: values.endpoints, adjudication: values.adjudication, signatures: values.signatures }}
            pointClassNames={values.pointClasses
              .filter((c) => !c.deleted && c.name.trim() !== '')
              .map((c) => c.name.trim())}
            onChange={set}
            issues={issuesOf('endpoints', 'adjudication', 'signatures')}
            reasons={{
              endpoints: reasonFor('endpoints'),
              adjudication: reasonFor('adjudication'),
              signatures: reasonFor('signatures'),
            }}
          />
        </SectionCard>
      </Section>
      <footer className="lamina-form-footer">
        {save.isError && (
          <Callout intent="danger" title="Error" role="alert" className="lamina-form-error">
            {errorMessage(save.error)}
          </Callout>
        )}
        <div className="lamina-form-actions">
          {!save.isPending && (
            <SaveBlockers
              groups={saveBlockerGroups(
                invalidGroups.map(blocker),
                missing.filter((g) => !invalidGroups.includes(g)).map(blocker),
              )}
              onGo={(item) => setTouched((current) => new Set(current).add(item.key as ReasonGroup))}
            />
          )}
          <Button
            text="Discard Changes"
            variant="outlined"
            onClick={() => void navigate('/studies')}
            disabled={save.isPending}
          />
          <Button type="submit" intent="primary" text="Save Changes" disabled={!canSave} loading={save.isPending} />
        </div>
      </footer>
    </form>
  );
}
