import { Button } from '@blueprintjs/core';
import { imageQcStepFrom, type CaseStatus, type ImageStatus } from '@lamina/domain';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useImageAction } from './api';

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
 * shown. The case moves on when all its images have passed.
 */
export function PassQcDialog({
  image,
  caseId,
  studyId,
  onClose,
}: {
  image: { id: number; name: string };
  caseId: number;
  studyId: number;
  onClose: () => void;
}) {
  const passQc = useImageAction(studyId);
  return (
    <ConfirmDialog
      isOpen
      title="Confirm Image Status Change"
      confirmText="Pass QC"
      isPending={passQc.isPending}
      error={passQc.isError ? errorMessage(passQc.error) : null}
      onConfirm={() =>
        passQc.mutate(
          { kind: 'passQc', imageId: image.id, caseId },
          {
            onSuccess: (response) => {
              void showToast(response.message);
              onClose();
            },
          },
        )
      }
      onClose={onClose}
    >
      <p>
        Pass the quality check of <strong>{image.name}</strong>? The case moves on when all its images have passed.
      </p>
    </ConfirmDialog>
  );
}
