import { Callout, Checkbox, Spinner, Tag } from '@blueprintjs/core';
import { ACCEPT_AI_PERMISSION, ANNOTATION_COLORS, buildHpfTree, hpfTreeTsv, type AiLayers } from '@lamina/domain';
import { useMemo, useSyncExternalStore } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { formatDate } from '../../util/formatDate';
import { useAcceptAiAnnotations } from './aiApi';
import type { AiSession } from './aiSession';
import { ClassNode, CopyButton, HpfRow, NodeRow } from './AnnotationTree';
import './aiAnnotations.css';

const never = () => false;
const nothing = () => undefined;

/**
 * The imported AI annotation tree of the Annotations tab (doc 3 §2): the imports (file, APP
 * sequence, date), 'Include AI annotation counts in reports' (the image's acceptAiAnnotations, with
 * AP_ImageViewer_AcceptAIAnnotations), the AI classes with their counts, and class → HPF → point
 * counts — each node with its visibility checkbox and hover highlight, none with a delete menu (AI
 * objects are read-only for everyone).
 */
export function AiAnnotationsSection({ ai }: { ai: AiSession }) {
  const { store, layers } = ai;
  const data = useSyncExternalStore(store.subscribe, () => store.snapshot);
  const tree = useMemo(
    () => buildHpfTree(data.annotations, ai.hpfClasses, ai.pointClasses),
    [data.annotations, ai.hpfClasses, ai.pointClasses],
  );

  let body;
  if (ai.error) {
    body = (
      <Callout intent="danger" compact title="Unable to fetch AI annotations">
        {errorMessage(ai.error)}
      </Callout>
    );
  } else if (!layers || !data.loaded) {
    body = <Spinner size={20} aria-label="Loading AI annotations" />;
  } else {
    body = (
      <>
        <Imports layers={layers} />
        <IncludeCounts imageId={ai.imageId} accepted={layers.acceptAiAnnotations} />
        <ul className="lamina-tree" role="tree" aria-label="AI classes">
          {layers.classes.map((c) => (
            <NodeRow
              key={c.id}
              store={store}
              node={{ kind: 'class', classId: c.id }}
              name={c.name}
              count={c.count}
              swatch={c.color ?? ANNOTATION_COLORS.default}
            />
          ))}
        </ul>
        {layers.classes.length === 0 && <p className="bp6-text-muted">No AI objects.</p>}
        {(tree.totalHpfs > 0 || tree.totalPoints > 0) && (
          <section aria-label="AI HPF tree" className="lamina-annotation-tree">
            <div className="lamina-viewer-box-head">
              <strong>
                AI HPFs ({tree.totalHpfs}) · points ({tree.totalPoints})
              </strong>
              <CopyButton text={() => hpfTreeTsv(tree)} label="Copy AI counts" />
            </div>
            <ul className="lamina-tree" role="tree" aria-label="AI annotation tree">
              {tree.classes.map((c) => (
                <ClassNode key={c.classId ?? 'other'} node={c} store={store} mayDelete={never} onDelete={nothing} />
              ))}
              {tree.orphan && <HpfRow hpf={tree.orphan} store={store} mayDelete={never} onDelete={nothing} />}
            </ul>
          </section>
        )}
      </>
    );
  }

  return (
    <section className="lamina-viewer-box lamina-ai-annotations" aria-label="Imported AI annotations">
      <div className="lamina-viewer-box-head">
        <strong>Imported AI annotations</strong>
        <Tag minimal icon="lock" htmlTitle="AI annotations are read-only">
          Read-only
        </Tag>
      </div>
      {body}
    </section>
  );
}

/** Each completed import: its file, APP sequence and date, and whether it brought a heatmap. */
function Imports({ layers }: { layers: AiLayers }) {
  return (
    <ul className="lamina-ai-imports">
      {layers.imports.map((m) => (
        <li key={m.mldId}>
          <div className="lamina-ai-import-name" title={m.name}>
            {m.name}
          </div>
          <div className="bp6-text-muted">
            APP sequence <span data-testid="app-sequence">{m.appSequenceId ?? '—'}</span>
            {m.completedAt && ` · imported ${formatDate(m.completedAt)}`}
            {m.heatmap && ' · with a heatmap'}
          </div>
        </li>
      ))}
    </ul>
  );
}

/**
 * 'Include AI annotation counts in reports' (doc 3 §2): the image's acceptAiAnnotations. Changed
 * only with the accept permission; others see the choice made.
 */
function IncludeCounts({ imageId, accepted }: { imageId: number; accepted: boolean }) {
  const actions = useUserInfo().data?.actions ?? [];
  const mayAccept = actions.includes(ACCEPT_AI_PERMISSION);
  const accept = useAcceptAiAnnotations(imageId);
  return (
    <>
      <Checkbox
        className="lamina-ai-include"
        label="Include AI annotation counts in reports"
        checked={accepted}
        disabled={!mayAccept || accept.isPending}
        title={
          mayAccept
            ? undefined
            : 'Set by the ISC or a study administrator; a reader chooses for their own read at Mark as Scored'
        }
        onChange={(event) => accept.mutate(event.currentTarget.checked)}
      />
      {accept.isError && (
        <Callout intent="danger" compact className="lamina-viewer-action-error">
          {errorMessage(accept.error)}
        </Callout>
      )}
    </>
  );
}
