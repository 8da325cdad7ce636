import { Button, Callout, Section, SectionCard } from '@blueprintjs/core';
import {
  withCeliacDefaults,
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
  studyConfigIssues,
  studyConfigResolver,
  type ReasonGroup,
  type Reasons,
  type StudyField,
} from '../studyConfigForm';
import { AnnotationClassListField } from './AnnotationClassListField';
import type { ReasonProps } from './ConfigField';
import { ProtocolIdsField } from './ProtocolIdsField';
import { IndicationsField, ModalityField, OnHoldField, SegmentsField, TextField } from './SimpleFields';
import { VisitPairsField } from './VisitPairsField';

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
  }

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

  const messages = (...fields: StudyField[]) => issues.filter((i) => fields.includes(i.field)).map((i) => i.message);
  const issuesOf = (...fields: StudyField[]) => issues.filter((i) => fields.includes(i.field));

  function handleIndications(next: Indication[]) {
    const celiacChosen = next.includes('CELIAC_DISEASE') && !values.indications.includes('CELIAC_DISEASE');
    set('indications', next);
    if (celiacChosen) {
      const defaults = withCeliacDefaults(values);
      set('pointClasses', defaults.pointClasses);
      set('multilineClasses', defaults.multilineClasses);
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
          <TextField
            label="Name"
            value={values.name}
            onChange={(v) => set('name', v)}
            issues={messages('name')}
            reason={reasonFor('name')}
            maxLength={TEXT_LIMITS.studyName}
          />
          <TextField
            label="Sponsor"
            value={values.sponsor ?? ''}
            onChange={(v) => set('sponsor', v === '' ? null : v)}
            issues={messages('sponsor')}
            reason={reasonFor('sponsor')}
            maxLength={TEXT_LIMITS.sponsor}
          />
          <ProtocolIdsField
            value={values.protocolIds}
            onChange={(v) => set('protocolIds', v)}
            issues={messages('protocolIds')}
            reason={reasonFor('protocolIds')}
          />
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
        </SectionCard>
      </Section>
      <Section title="Indications, segments and modality" compact>
        <SectionCard>
          <IndicationsField
            value={values.indications}
            onChange={handleIndications}
            issues={messages('indications')}
            reason={reasonFor('indications')}
          />
          <SegmentsField
            value={{ segments: values.segments, anatomicalSegments: values.anatomicalSegments }}
            onChange={(v) => {
              set('segments', v.segments);
              set('anatomicalSegments', v.anatomicalSegments);
            }}
            issues={messages('segments', 'anatomicalSegments')}
            reason={reasonFor('segments')}
          />
          <ModalityField
            value={values.modality}
            onChange={(v) => set('modality', v)}
            issues={messages('modality')}
            reason={reasonFor('modality')}
          />
        </SectionCard>
      </Section>
      <Section title="Status" compact>
        <SectionCard>
          <OnHoldField
            value={{ onHold: values.onHold, onHoldReason: values.onHoldReason }}
            onChange={(v) => {
              set('onHold', v.onHold);
              set('onHoldReason', v.onHoldReason);
            }}
            issues={messages('onHold', 'onHoldReason')}
            reason={reasonFor('onHold')}
          />
        </SectionCard>
      </Section>
      <Section title="Annotation classes" compact>
        <SectionCard>
          {CLASS_LISTS.map(({ list, label }) => (
            <AnnotationClassListField
              key={list}
              label={label}
              value={values[list]}
              onChange={(v) => set(list, v)}
              counts={counts}
              issues={issuesOf(list)}
              reason={reasonFor(list)}
            />
          ))}
        </SectionCard>
      </Section>
      <footer className="lamina-form-footer">
        {save.isError && (
          <Callout intent="danger" title="Error" role="alert" className="lamina-form-error">
            {errorMessage(save.error)}
          </Callout>
        )}
        <div className="lamina-form-actions">
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
