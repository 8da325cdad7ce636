import { Button, Callout, FormGroup, TextArea } from '@blueprintjs/core';
import {
  CASE_COMMENT_MAX,
  CASE_COMMENT_PERMISSIONS,
  CASE_MESSAGES,
  caseResponseSchema,
  hasAny,
  imageActionResponseSchema,
  TOGGLE_VISIBILITY_PERMISSION,
  unableToHideImage,
  type CaseImage,
  type CaseView,
} from '@lamina/domain';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { errorMessage, withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { showToast } from '../../components/appToaster';
import { caseKeys, useRefreshStudy } from '../cases/api';
import { imageQueryKey } from '../../api/imageQuery';

/**
 * Two actions of the case viewer's Overview (issue 13; doc 3 §4, doc 2 §4): Show to reader / Hide
 * from reader on the image shown, and Add comment on the case.
 */

/** Show to reader / Hide from reader is offered with the ISC-QC permission, for an image in a query chain. */
export function readerVisibilityOffered(image: Pick<CaseImage, 'inQueryChain'>, actions: readonly string[]): boolean {
  return image.inQueryChain && actions.includes(TOGGLE_VISIBILITY_PERMISSION);
}

/** PATCH /api/images/{id}/toggle-image-visibility; afterwards the case and the image are read again. */
function useToggleImageVisibility(studyId: number) {
  const queryClient = useQueryClient();
  const refresh = useRefreshStudy();
  return useMutation({
    mutationFn: ({ imageId }: { imageId: number; caseId: number }) =>
      withFallbackMessage(
        apiFetch(`/api/images/${imageId}/toggle-image-visibility`, {
          method: 'PATCH',
          schema: imageActionResponseSchema,
        }),
        unableToHideImage(imageId),
      ),
    onSuccess: async (_response, { imageId, caseId }) => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: imageQueryKey(imageId) }),
        refresh(studyId, [caseId]),
      ]);
    },
  });
}

/**
 * 'Hide from reader', or 'Show to reader' when the image is hidden (its `ignored`): no confirmation
 * (the spec has none); on success the server's message as a toast and the case and image reloaded,
 * on failure the server's message in a red callout under the button.
 */
export function ReaderVisibilityButton({ image, c }: { image: CaseImage; c: Pick<CaseView, 'id' | 'studyId'> }) {
  const toggle = useToggleImageVisibility(c.studyId);
  const failed = toggle.isError && toggle.variables.imageId === image.id;
  return (
    <>
      <Button
        size="small"
        icon={image.ignored ? 'eye-open' : 'eye-off'}
        text={image.ignored ? 'Show to reader' : 'Hide from reader'}
        loading={toggle.isPending}
        onClick={() =>
          toggle.mutate(
            { imageId: image.id, caseId: c.id },
            { onSuccess: (response) => void showToast(response.message) },
          )
        }
      />
      {failed && (
        <Callout intent="danger" role="alert" className="lamina-viewer-action-error">
          {errorMessage(toggle.error)}
        </Callout>
      )}
    </>
  );
}

/** Whether the user may comment on the case (the server's rule: whoever may open it). */
export function caseCommentOffered(actions: readonly string[]): boolean {
  return hasAny(actions, CASE_COMMENT_PERMISSIONS);
}

/** PATCH /api/cases/{id}/comment { caseId, imageId, comment }; the answer is the case with its new comment. */
function useAddCaseComment() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ caseId, imageId, comment }: { caseId: number; imageId: number | null; comment: string }) =>
      withFallbackMessage(
        apiFetch(`/api/cases/${caseId}/comment`, {
          method: 'PATCH',
          body: { caseId, imageId, comment },
          schema: caseResponseSchema,
        }),
        CASE_MESSAGES.unableToComment(caseId),
      ),
    onSuccess: async (response) => {
      queryClient.setQueryData(caseKeys.detail(response.case.id), response.case);
      await queryClient.invalidateQueries({ queryKey: caseKeys.detail(response.case.id) });
    },
  });
}

/**
 * 'Add comment': a textarea (at most the server's CASE_COMMENT_MAX characters), Save and Cancel. The
 * comment notes the image shown. On success the case is read again (its lastCaseComment) and
 * `onAdded` runs; a refusal shows the server's message in a red callout.
 */
export function AddCaseComment({
  caseId,
  imageId,
  onAdded,
}: {
  caseId: number;
  imageId: number | null;
  onAdded?: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const add = useAddCaseComment();
  const textId = useId();
  const close = () => {
    setEditing(false);
    setText('');
    add.reset();
  };
  if (!editing) return <Button size="small" icon="comment" text="Add comment" onClick={() => setEditing(true)} />;
  return (
    <form
      className="lamina-case-comment-form"
      aria-label="Add comment"
      onSubmit={(event) => {
        event.preventDefault();
        add.mutate(
          { caseId, imageId, comment: text.trim() },
          {
            onSuccess: (response) => {
              void showToast(response.message || CASE_MESSAGES.commentAdded);
              close();
              onAdded?.();
            },
          },
        );
      }}
    >
      <FormGroup label="Comment" labelFor={textId} helperText={`${text.length} / ${CASE_COMMENT_MAX}`}>
        <TextArea
          id={textId}
          fill
          autoFocus
          maxLength={CASE_COMMENT_MAX}
          value={text}
          onChange={(event) => setText(event.currentTarget.value)}
        />
      </FormGroup>
      {add.isError && (
        <Callout intent="danger" role="alert" className="lamina-viewer-action-error">
          {errorMessage(add.error)}
        </Callout>
      )}
      <div className="lamina-viewer-box-actions">
        <Button
          type="submit"
          size="small"
          intent="primary"
          text="Save"
          loading={add.isPending}
          disabled={text.trim() === ''}
        />
        <Button size="small" text="Cancel" onClick={close} disabled={add.isPending} />
      </div>
    </form>
  );
}
