import { Button, Callout, NonIdealState, Spinner } from '@blueprintjs/core';
import { QUERY_ISSUE_PERMISSION, QUERY_RESOLUTION_OPTIONS, type QueryView } from '@lamina/domain';
import { useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { parsePositiveId } from '../../lib/ids';
import { lazyComponent } from '../../components/lazyComponent';
import { imageQueryKey } from '../../api/imageQuery';
import { useCaseQueries, useImageQueries, useQueryMetadata, useRefreshAfterReplace } from './api';
import { CreateQueryWizard, type WizardTargets } from './CreateQueryWizard';
import { QueryCard } from './QueryCard';
import { needsAttention } from './queryStatus';
import './queries.css';

/** Replace image's upload dialog: its code (Uppy's) loads when a replacement starts, not with the viewer. */
const UploadImagesDialog = lazyComponent(
  'the upload dialog',
  async () => (await import('../upload')).UploadImagesDialog,
);

/** The image a viewer shows: its queries are listed, and it may be queried. */
export interface QueriedImage {
  id: number;
  name: string;
  caseId: number | null;
}

interface QueriesTabProps {
  studyId: number;
  /** The case viewer's case (its queries, and a case query may be opened); null in the image viewer. */
  caseId: number | null;
  /** The image shown. */
  image: QueriedImage | null;
  /**
   * An image was replaced from a query (its open queries went over to the new image): the viewer
   * shows the new image with the query named.
   */
  onImageReplaced: (newImageId: number, queryId: number) => void;
}

/** The case's and the image's queries together, newest first, each once. */
function useShownQueries(caseId: number | null, imageId: number | null, enabled = true) {
  const ofCase = useCaseQueries(caseId, enabled);
  const ofImage = useImageQueries(imageId, enabled);
  const queries = useMemo(() => {
    const all = [...(ofCase.data ?? []), ...(ofImage.data ?? [])];
    const unique = [...new Map(all.map((q) => [q.id, q])).values()];
    return unique.sort((a, b) => b.openedAt.localeCompare(a.openedAt) || b.id - a.id);
  }, [ofCase.data, ofImage.data]);
  const lists = [caseId !== null ? ofCase : null, imageId !== null ? ofImage : null].filter((l) => l !== null);
  return {
    queries,
    isPending: lists.some((l) => l.isPending),
    errors: lists.filter((l) => l.isError).map((l) => errorMessage(l.error)),
  };
}

/** The red dot of the Queries tab (doc 3 §2): a shown query waits for this user. */
export function useQueriesAttention(caseId: number | null, imageId: number | null, enabled: boolean): boolean {
  const { queries } = useShownQueries(caseId, imageId, enabled);
  return enabled && queries.some(needsAttention);
}

/**
 * The viewer's Queries tab (doc 3 §2, §4, §6): New query (with the permission to open a case or an
 * image query) opens the create wizard; then the query cards of the case and of the image shown,
 * each with the actions the server allows. `?queryId=` opens, scrolls to and highlights that query.
 */
export function QueriesTab({ studyId, caseId, image, onImageReplaced }: QueriesTabProps) {
  const user = useUserInfo().data;
  const [search] = useSearchParams();
  const queryClient = useQueryClient();
  const refresh = useRefreshAfterReplace();
  const [wizardOpen, setWizardOpen] = useState(false);
  const [created, setCreated] = useState<number | null>(null);
  const [replacing, setReplacing] = useState<QueryView | null>(null);
  const shown = useShownQueries(caseId, image?.id ?? null);
  const metadata = useQueryMetadata(studyId);
  const focusId = created ?? parsePositiveId(search.get('queryId') ?? undefined);

  const actions = user?.actions ?? [];
  const targets: WizardTargets = {};
  if (caseId !== null && actions.includes(QUERY_ISSUE_PERMISSION.CASE))
    targets.CASE = { studyId, objectId: caseId, caseId, label: 'The case' };
  if (image && actions.includes(QUERY_ISSUE_PERMISSION.IMAGE))
    targets.IMAGE = { studyId, objectId: image.id, caseId: image.caseId, label: `The image ${image.name}` };
  const mayOpen = Object.keys(targets).length > 0;

  return (
    <div className="lamina-queries-tab">
      {mayOpen && !wizardOpen && (
        <Button icon="add" intent="primary" text="New query" onClick={() => setWizardOpen(true)} />
      )}
      {wizardOpen && (
        <CreateQueryWizard
          // A new image or case starts a new wizard.
          key={`${caseId ?? ''}-${image?.id ?? ''}`}
          studyId={studyId}
          targets={targets}
          onDone={(query) => {
            setWizardOpen(false);
            if (query) setCreated(query.id);
          }}
        />
      )}
      {shown.errors.map((message) => (
        <Callout key={message} intent="danger" role="alert" className="lamina-dialog-error">
          {message}
        </Callout>
      ))}
      {shown.isPending ? (
        <Spinner size={30} aria-label="Loading queries" className="lamina-queries-spinner" />
      ) : shown.queries.length === 0 ? (
        shown.errors.length === 0 && (
          <NonIdealState
            icon="chat"
            title="No queries"
            description={
              caseId !== null ? 'No query was raised on this case or image.' : 'No query was raised on this image.'
            }
          />
        )
      ) : (
        <div className="lamina-query-list" role="list" aria-label="Queries">
          {shown.queries.map((q) => (
            <div role="listitem" key={q.id}>
              <QueryCard
                query={q}
                focused={q.id === focusId}
                resolutionOptions={
                  metadata.data?.resolutionOptions[q.objectType] ?? QUERY_RESOLUTION_OPTIONS[q.objectType]
                }
                onReplaceImage={setReplacing}
              />
            </div>
          ))}
        </div>
      )}
      {replacing && (
        <UploadImagesDialog
          isOpen
          studyId={replacing.studyId}
          imageToReplace={{ id: replacing.objectId, name: replacing.imageName ?? `Image ${replacing.objectId}` }}
          onClose={() => setReplacing(null)}
          onUploaded={(images) => {
            void refresh(replacing.caseId);
            void queryClient.invalidateQueries({ queryKey: imageQueryKey(replacing.objectId) });
            const replacement = images[0];
            if (replacement) onImageReplaced(replacement.id, replacing.id);
          }}
        />
      )}
    </div>
  );
}
