import { Button } from '@blueprintjs/core';
import { imageQcStepFrom, type CaseStatus, type ImageStatus } from '@lamina/domain';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useImageAction } from './api';
import { SignatureFields, signatureUsed, useSignature } from './SignatureFields';

/** Whether this user may pass this image's QC now (the server checks it again). */
export function imageQcOffered(status: ImageStatus, caseStatus: CaseStatus, actions: readonly string[]): boolean {
  const step = imageQcStepFrom(status);
  return step !== null && step.caseStatus === caseStatus && actions.includes(step.permission);
}

/** 'Pass Lab QC' or 'Pass ISC QC', by the step the image waits for. */
export function PassQcButton({ status, name, onClick }: { status: ImageStatus; name: string; onClick: () => void }) {
  return (
    <Button
      size="small"
      icon="tick"
      intent="success"
      text={status === 'LAB_QC_PENDING' ? 'Pass Lab QC' : 'Pass ISC QC'}
      aria-label={`Pass QC of ${name}`}
      onClick={onClick}
    />
  );
}

/**
 * 'Confirm Image Status Change' (doc 3 §4): passes the image's QC step; the resulting status is not
 * shown. The case moves on when all its images have passed. Where the study signs QC passes, the
 * pass is an electronic signature (Lab QC passed / ISC QC passed, by the image's step; issue 30).
 */
export function PassQcDialog({
  image,
  caseId,
  studyId,
  onClose,
}: {
  image: { id: number; name: string; status: ImageStatus };
  caseId: number;
  studyId: number;
  onClose: () => void;
}) {
  const passQc = useImageAction(studyId);
  const signature = useSignature(studyId, imageQcStepFrom(image.status)?.signature ?? null);
  const confirm = () => {
    if (!signature.ready || passQc.isPending) return;
    const signing = signature.sign();
    passQc.mutate(
      { kind: 'passQc', imageId: image.id, caseId, ...(signing ? { signing } : {}) },
      {
        onSuccess: (response) => {
          signatureUsed(signature);
          void showToast(response.message);
          onClose();
        },
        onError: signature.handleError,
      },
    );
  };
  return (
    <ConfirmDialog
      isOpen
      title="Confirm Image Status Change"
      confirmText="Pass QC"
      isPending={passQc.isPending}
      confirmDisabled={!signature.ready}
      error={passQc.isError ? errorMessage(passQc.error) : null}
      onConfirm={confirm}
      onClose={onClose}
    >
      <p>
        Pass the quality check of <strong>{image.name}</strong>? The case moves on when all its images have passed.
      </p>
      <SignatureFields signature={signature} onSubmit={confirm} />
    </ConfirmDialog>
  );
}
