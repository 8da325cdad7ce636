import { FormGroup, HTMLSelect, Radio, RadioGroup } from '@blueprintjs/core';
import {
  CASE_STATUS_LABELS,
  REVERT_ANY_PERMISSION,
  forwardStepFrom,
  hasAny,
  isReadingStatus,
  markScoredOutcome,
  revertChoices,
  revertConfirmation,
  type CaseReaderRole,
  type CaseStage,
  type CaseStatus,
} from '@lamina/domain';
import { useId, useState } from 'react';
import { useNavigate } from 'react-router';
import { useEmbeddedMode } from '../../components/embedded';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { showToast } from '../../components/appToaster';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useCaseStatusAction } from './api';
import { ReasonDialog } from './ReasonDialog';
import { SignatureFields, signatureUsed, useSignature } from './SignatureFields';

/** The case a status dialog acts on. */
export interface CaseRef {
  id: number;
  studyId: number;
  procId: string | null;
  status: CaseStatus;
  prevWorkflowStatuses: readonly CaseStatus[];
}

export type CaseActionKind = 'forward' | 'revert' | 'hold' | 'unhold' | 'archive';

const caseName = (c: CaseRef) => c.procId ?? `Case ${c.id}`;

/** Whether `kind` is offered for the case to this user (the server checks it again). */
export function caseActionOffered(
  kind: CaseActionKind,
  c: CaseRef & { readers?: readonly { id: number; readAt: string | null; role?: CaseReaderRole }[] },
  actions: readonly string[],
  /**
   * The user, when the case's readers are known: Mark as Scored is for an assigned reader who has
   * not yet — a primary reader while the case is Processed, its adjudicator while it is Pending
   * Adjudication (issue 30).
   */
  userId?: number,
): boolean {
  switch (kind) {
    case 'forward': {
      const step = forwardStepFrom(c.status);
      if (step === null || !actions.includes(step.permission)) return false;
      if (!isReadingStatus(c.status) || userId === undefined || !c.readers) return true;
      const mine = markScoredOutcome(
        c.readers.map((r) => ({ userId: r.id, readAt: r.readAt, role: r.role })),
        userId,
        c.status,
      );
      return mine.assigned && !mine.alreadyRead;
    }
    case 'revert':
      return (
        hasAny(actions, ['S_CaseListTab_EditCase', REVERT_ANY_PERMISSION]) &&
        revertChoices(c, actions.includes(REVERT_ANY_PERMISSION)).length > 0
      );
    case 'hold':
      return (
        actions.includes('IM_CaseListTab_PutoHold') && ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'].includes(c.status)
      );
    case 'unhold':
      return actions.includes('IM_CaseListTab_PutoHold') && c.status === 'ON_HOLD';
    case 'archive':
      return actions.includes('IM_CaseListTab_ArchiveCase') && c.status !== 'ARCHIVED';
  }
}

/** The label of the forward button: Pass Lab QC, Pass ISC QC, or Mark as Scored (doc 3 §4; the adjudicator's too). */
export function forwardLabel(status: CaseStatus): string {
  if (status === 'PENDING_LAB_QC') return 'Pass Lab QC';
  if (isReadingStatus(status)) return 'Mark as Scored';
  return 'Pass ISC QC';
}

/**
 * The status dialogs of a case (doc 2 §2.7, §4): Pass QC (a confirmation), Revert Status (a status
 * and a reason, then 'Are you sure you want to set the status of case … back to …?'), Put On Hold,
 * Remove Hold and Archive Case (each with its reason). Success: a green toast and the dialog closes;
 * failure: the server's message in red, the dialog stays.
 */
export function CaseActionDialog({
  kind,
  target,
  onClose,
  aiImage,
}: {
  kind: CaseActionKind;
  target: CaseRef;
  onClose: () => void;
  /**
   * Mark as Scored of an image with imported AI annotations: the dialog asks whether to include or
   * exclude their counts (doc 3 §4), starting from the image's setting; the reader's choice is sent
   * with the mark and kept with their read, never set on the image, where a second reader of the
   * case would read it (issue 26).
   */
  aiImage?: { id: number; acceptAiAnnotations: boolean } | undefined;
}) {
  const mutation = useCaseStatusAction();
  const actions = useUserInfo().data?.actions ?? [];
  const [includeAi, setIncludeAi] = useState(aiImage?.acceptAiAnnotations ?? false);
  const selectId = useId();
  const choices = revertChoices(target, actions.includes(REVERT_ANY_PERMISSION));
  const [status, setStatus] = useState<CaseStage | ''>(choices.at(-1) ?? '');
  const [confirming, setConfirming] = useState<{ reason: string } | null>(null);
  const error = mutation.isError ? errorMessage(mutation.error) : null;
  const navigate = useNavigate();
  const embedded = useEmbeddedMode();
  // Pass Lab QC, Pass ISC QC and Mark as Scored are electronic signatures where the study signs (issue 30).
  const signature = useSignature(
    target.studyId,
    kind === 'forward' ? (forwardStepFrom(target.status)?.signature ?? null) : null,
  );
  const done = (response: { message: string }) => {
    void showToast(response.message);
    onClose();
    // Mark as Scored ends the reader's work on the case (the last reader's mark completes it): on to
    // the study, or the success page when embedded (doc 3 §4).
    if (kind === 'forward' && isReadingStatus(target.status))
      void navigate(embedded ? '/successMessage' : `/studies/${target.studyId}`);
  };

  if (kind === 'forward') {
    const reading = isReadingStatus(target.status);
    const askAi = reading && aiImage !== undefined;
    const confirm = () => {
      if (!signature.ready || mutation.isPending) return;
      const signing = signature.sign();
      mutation.mutate(
        {
          kind: 'forward',
          id: target.id,
          ...(askAi ? { includeAiCounts: includeAi } : {}),
          ...(signing ? { signing } : {}),
        },
        {
          onSuccess: (response) => {
            signatureUsed(signature);
            done(response);
          },
          onError: signature.handleError,
        },
      );
    };
    return (
      <ConfirmDialog
        isOpen
        // 'Confirm Case Status Change' for a QC step, 'Mark as Scored' for the read (doc 3 §2 dialogs).
        title={reading ? forwardLabel(target.status) : 'Confirm Case Status Change'}
        confirmText={forwardLabel(target.status)}
        isPending={mutation.isPending}
        confirmDisabled={!signature.ready}
        error={error}
        onConfirm={confirm}
        onClose={onClose}
      >
        {reading ? (
          <>
            {target.status === 'PENDING_ADJUDICATION' ? (
              <p>
                Mark case <strong>{caseName(target)}</strong> as scored? Your scores can no longer be changed; your read
                as the adjudicator completes the case.
              </p>
            ) : (
              <p>
                Mark case <strong>{caseName(target)}</strong> as scored? Your scores can no longer be changed; the case
                completes when every assigned reader has marked it.
              </p>
            )}
            {askAi && (
              <RadioGroup
                label="This image has imported AI annotations. Include or exclude their counts?"
                selectedValue={includeAi ? 'include' : 'exclude'}
                onChange={(event) => setIncludeAi(event.currentTarget.value === 'include')}
              >
                <Radio value="include" label="Include imported AI annotation counts" />
                <Radio value="exclude" label="Exclude imported AI annotation counts" />
              </RadioGroup>
            )}
          </>
        ) : (
          <p>
            Pass case <strong>{caseName(target)}</strong> from {CASE_STATUS_LABELS[target.status]} to{' '}
            {CASE_STATUS_LABELS[forwardStepFrom(target.status)?.to ?? target.status]}? Its images move on with it.
          </p>
        )}
        <SignatureFields signature={signature} onSubmit={confirm} />
      </ConfirmDialog>
    );
  }

  if (kind === 'revert') {
    if (confirming && status) {
      return (
        <ConfirmDialog
          isOpen
          title="Revert Status"
          confirmText="Revert"
          intent="warning"
          isPending={mutation.isPending}
          error={error}
          onConfirm={() =>
            mutation.mutate(
              { kind: 'back', id: target.id, value: status, reason: confirming.reason },
              { onSuccess: done },
            )
          }
          onClose={onClose}
        >
          <p>{revertConfirmation(caseName(target), CASE_STATUS_LABELS[status])}</p>
        </ConfirmDialog>
      );
    }
    return (
      <ReasonDialog
        title="Revert Status"
        confirmText="Continue"
        ready={status !== ''}
        isPending={false}
        error={null}
        onConfirm={(reason) => setConfirming({ reason })}
        onClose={onClose}
      >
        <FormGroup label="Set the status back to" labelFor={selectId}>
          <HTMLSelect
            id={selectId}
            fill
            value={status}
            onChange={(event) => setStatus(event.currentTarget.value as CaseStage)}
            options={[
              { value: '', label: 'Choose a status', disabled: true },
              ...choices.map((s) => ({ value: s, label: CASE_STATUS_LABELS[s] })),
            ]}
          />
        </FormGroup>
      </ReasonDialog>
    );
  }

  const spec = {
    hold: { title: 'Put On Hold', confirm: 'Put on hold', action: 'on_hold' as const, intent: 'warning' as const },
    unhold: { title: 'Remove Hold', confirm: 'Remove hold', action: 'off_hold' as const, intent: 'primary' as const },
    archive: { title: 'Archive Case', confirm: 'Archive', action: 'archive' as const, intent: 'danger' as const },
  }[kind];
  return (
    <ReasonDialog
      title={spec.title}
      confirmText={spec.confirm}
      intent={spec.intent}
      isPending={mutation.isPending}
      error={error}
      onConfirm={(reason) => mutation.mutate({ kind: spec.action, id: target.id, reason }, { onSuccess: done })}
      onClose={onClose}
    >
      <p>
        {kind === 'archive'
          ? `Archive case ${caseName(target)} and all its images?`
          : kind === 'hold'
            ? `Put case ${caseName(target)} on hold? It keeps its images; removing the hold returns it to ${CASE_STATUS_LABELS[target.status]}.`
            : `Remove the hold from case ${caseName(target)}?`}
      </p>
    </ReasonDialog>
  );
}
