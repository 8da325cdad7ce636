import {
  Button,
  Callout,
  FormGroup,
  HTMLSelect,
  InputGroup,
  Radio,
  RadioGroup,
  Spinner,
  TextArea,
} from '@blueprintjs/core';
import {
  followUpDate,
  QUERY_FOLLOW_UP_MAX_DAYS,
  QUERY_TEXT_MAX,
  QUERY_WIZARD_STEPS,
  type QueryObjectType,
  type QueryView,
} from '@lamina/domain';
import { useId, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { formatDay } from '../../util/formatDate';
import { useCase } from '../cases/api';
import { useCreateQuery, useQueryMetadata } from './api';
import {
  choosesReader,
  clampFollowUp,
  createQueryBody,
  initialWizard,
  reasonsFor,
  wizardStepErrors,
  type WizardState,
  type WizardStep,
  type WizardTarget,
} from './wizardState';

export type WizardTargets = Partial<Record<QueryObjectType, WizardTarget & { label: string }>>;

interface CreateQueryWizardProps {
  studyId: number;
  /** What the user may query here: the case and/or the image shown (at least one). */
  targets: WizardTargets;
  /** The wizard closes: after Cancel on step 1, or with the query it created. */
  onDone: (created: QueryView | null) => void;
}

const STEP_TITLES: Record<WizardStep, string> = {
  1: 'Role to query',
  2: 'Reason and comments',
  3: 'Follow-up date',
  4: 'Confirm',
};

/**
 * The create-query wizard (doc 3 §4, §5): 1 the role to query (and, in the case viewer, whether
 * the case or the image shown), 2 reason, sub-reason and mandatory comments, 3 the follow-up date
 * (14 days by default, never in the past), 4 confirm. Back/Next; Cancel on step 1 closes it and
 * the reset icon starts over; Submit sends it and resets.
 */
export function CreateQueryWizard({ studyId, targets, onDone }: CreateQueryWizardProps) {
  const firstType: QueryObjectType = targets.CASE ? 'CASE' : 'IMAGE';
  const [state, setState] = useState<WizardState>(() => initialWizard(firstType, new Date()));
  const [tried, setTried] = useState(false);
  const metadata = useQueryMetadata(studyId);
  const create = useCreateQuery();
  const ids = { about: useId(), reader: useId(), reason: useId(), child: useId(), comment: useId(), date: useId() };
  const reasons = reasonsFor(metadata.data, state.objectType, state.withRoleId);
  const reason = reasons.find((r) => r.reasonOptionId === state.reasonId);
  const needsReader = choosesReader(metadata.data, state.withRoleId);
  const errors = tried ? wizardStepErrors(state, reasons, needsReader) : null;
  const target = targets[state.objectType];
  const role = metadata.data?.roles.find((r) => r.id === state.withRoleId);
  // A query to a reading role names one reader of the case (issue 26): its readers, when needed.
  const caseOfTarget = useCase(needsReader ? (target?.caseId ?? null) : null);
  const readers = needsReader ? (caseOfTarget.data?.readers ?? []) : [];
  const reader = readers.find((r) => r.id === state.withUserId);

  const update = (patch: Partial<WizardState>) => setState((s) => ({ ...s, ...patch }));
  const reset = () => {
    setState(initialWizard(firstType, new Date()));
    setTried(false);
    create.reset();
  };
  const next = () => {
    if (wizardStepErrors(state, reasons, needsReader)) return setTried(true);
    setTried(false);
    update({ step: (state.step + 1) as WizardStep });
  };
  const back = () => {
    setTried(false);
    update({ step: (state.step - 1) as WizardStep });
  };
  const submit = () => {
    if (!target) return;
    create.mutate(createQueryBody(state, target, new Date()), {
      onSuccess: (response) => {
        void showToast(response.message);
        reset();
        onDone(response.query);
      },
    });
  };

  return (
    <section className="lamina-viewer-box lamina-query-wizard" aria-label="New query">
      <div className="lamina-viewer-box-head">
        <strong>
          New query · Step {state.step} of {QUERY_WIZARD_STEPS}: {STEP_TITLES[state.step]}
        </strong>
        <Button size="small" variant="minimal" icon="reset" aria-label="Reset" title="Start over" onClick={reset} />
      </div>
      {metadata.isPending && <Spinner size={20} aria-label="Loading query options" />}
      {metadata.isError && (
        <Callout intent="danger" role="alert">
          {errorMessage(metadata.error)}
        </Callout>
      )}
      {metadata.data && state.step === 1 && (
        <>
          {targets.CASE && targets.IMAGE && (
            <RadioGroup
              label="About"
              name={ids.about}
              selectedValue={state.objectType}
              onChange={(e) =>
                update({
                  objectType: e.currentTarget.value as QueryObjectType,
                  withUserId: null,
                  reasonId: null,
                  childReasonId: null,
                })
              }
            >
              <Radio value="CASE" label={targets.CASE.label} />
              <Radio value="IMAGE" label={targets.IMAGE.label} />
            </RadioGroup>
          )}
          {metadata.data.roles.length === 0 ? (
            <Callout intent="warning">There is no role you may send a query to in this study.</Callout>
          ) : (
            <RadioGroup
              label="Query with"
              selectedValue={state.withRoleId ?? undefined}
              onChange={(e) =>
                update({
                  withRoleId: Number(e.currentTarget.value),
                  withUserId: null,
                  reasonId: null,
                  childReasonId: null,
                })
              }
            >
              {metadata.data.roles.map((r) => (
                <Radio key={r.id} value={r.id} label={r.displayName} />
              ))}
            </RadioGroup>
          )}
          {needsReader && caseOfTarget.isPending && target?.caseId != null && (
            <Spinner size={20} aria-label="Loading the case's readers" />
          )}
          {needsReader && !caseOfTarget.isPending && readers.length === 0 && (
            <Callout intent="warning">No reader is assigned to this case: there is nobody to query.</Callout>
          )}
          {needsReader && readers.length > 0 && (
            <FormGroup
              label="Reader"
              labelFor={ids.reader}
              intent={errors?.reader ? 'danger' : 'none'}
              helperText={errors?.reader ?? 'Only this reader sees the query.'}
            >
              <HTMLSelect
                id={ids.reader}
                fill
                value={state.withUserId ?? ''}
                onChange={(e) =>
                  update({ withUserId: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })
                }
                options={[
                  { value: '', label: 'Choose the reader…' },
                  ...readers.map((r) => ({ value: r.id, label: r.displayName })),
                ]}
              />
            </FormGroup>
          )}
        </>
      )}
      {metadata.data && state.step === 2 && (
        <>
          <FormGroup
            label="Reason"
            labelFor={ids.reason}
            intent={errors?.reason ? 'danger' : 'none'}
            helperText={errors?.reason}
          >
            <HTMLSelect
              id={ids.reason}
              fill
              value={state.reasonId ?? ''}
              onChange={(e) =>
                update({
                  reasonId: e.currentTarget.value === '' ? null : Number(e.currentTarget.value),
                  childReasonId: null,
                })
              }
              options={[
                { value: '', label: reasons.length === 0 ? 'No reasons for this role' : 'Choose a reason…' },
                ...reasons.map((r) => ({ value: r.reasonOptionId, label: r.reasonText })),
              ]}
            />
          </FormGroup>
          {reason && reason.children.length > 0 && (
            <FormGroup
              label="Sub-reason"
              labelFor={ids.child}
              intent={errors?.childReason ? 'danger' : 'none'}
              helperText={errors?.childReason}
            >
              <HTMLSelect
                id={ids.child}
                fill
                value={state.childReasonId ?? ''}
                onChange={(e) =>
                  update({ childReasonId: e.currentTarget.value === '' ? null : Number(e.currentTarget.value) })
                }
                options={[
                  { value: '', label: 'Choose a sub-reason…' },
                  ...reason.children.map((c) => ({ value: c.id, label: c.reasonText })),
                ]}
              />
            </FormGroup>
          )}
          <FormGroup
            label="Comments"
            labelFor={ids.comment}
            intent={errors?.comment ? 'danger' : 'none'}
            helperText={errors?.comment ?? `${state.comment.length} / ${QUERY_TEXT_MAX}`}
          >
            <TextArea
              id={ids.comment}
              fill
              rows={4}
              maxLength={QUERY_TEXT_MAX}
              intent={errors?.comment ? 'danger' : 'none'}
              value={state.comment}
              onChange={(e) => update({ comment: e.currentTarget.value })}
            />
          </FormGroup>
        </>
      )}
      {state.step === 3 && (
        <FormGroup
          label="Follow up on"
          labelFor={ids.date}
          intent={errors?.followUp ? 'danger' : 'none'}
          helperText={errors?.followUp ?? 'The role queried is reminded on this date. A past date becomes today.'}
        >
          <InputGroup
            id={ids.date}
            type="date"
            min={followUpDate(new Date(), 0)}
            max={followUpDate(new Date(), QUERY_FOLLOW_UP_MAX_DAYS)}
            value={state.followUp}
            onValueChange={(value) => update({ followUp: clampFollowUp(value, new Date()) })}
          />
        </FormGroup>
      )}
      {state.step === 4 && (
        <dl className="lamina-query-facts lamina-query-confirm" aria-label="Confirm the query">
          <dt>About</dt>
          <dd>{target?.label}</dd>
          <dt>With</dt>
          <dd>
            {role?.displayName}
            {reader && ` · ${reader.displayName}`}
          </dd>
          <dt>Reason</dt>
          <dd>
            {reason?.reasonText}
            {reason &&
              state.childReasonId !== null &&
              ` – ${reason.children.find((c) => c.id === state.childReasonId)?.reasonText ?? ''}`}
          </dd>
          <dt>Comments</dt>
          <dd className="lamina-query-history-text">{state.comment.trim()}</dd>
          <dt>Follow-up</dt>
          <dd>{formatDay(state.followUp)}</dd>
        </dl>
      )}
      {create.isError && (
        <Callout intent="danger" role="alert" className="lamina-dialog-error">
          {errorMessage(create.error)}
        </Callout>
      )}
      <div className="lamina-viewer-box-actions lamina-query-wizard-buttons">
        {state.step === 1 ? (
          <Button
            text="Cancel"
            variant="minimal"
            onClick={() => {
              reset();
              onDone(null);
            }}
          />
        ) : (
          <Button text="Back" icon="arrow-left" onClick={back} disabled={create.isPending} />
        )}
        {state.step < 4 ? (
          <Button
            text="Next"
            intent="primary"
            endIcon="arrow-right"
            onClick={next}
            disabled={
              !metadata.data ||
              (state.step === 1 && (state.withRoleId === null || (needsReader && readers.length === 0)))
            }
          />
        ) : (
          <Button text="Submit" intent="primary" loading={create.isPending} onClick={submit} />
        )}
      </div>
    </section>
  );
}
