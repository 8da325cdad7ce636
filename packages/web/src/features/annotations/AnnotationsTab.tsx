import { Button, Callout, FileInput, HTMLSelect, HTMLTable, NonIdealState, Spinner } from '@blueprintjs/core';
import {
  ANNOTATION_MESSAGES,
  MULTILINE_CATEGORY_LABELS,
  buildHpfTree,
  celiacTable,
  formatAreaUm2,
  formatLengthUm,
  hpfTreeTsv,
  type AnnotationView,
  type ReaderKey,
} from '@lamina/domain';
import { useMutation } from '@tanstack/react-query';
import { useId, useMemo, useState, useSyncExternalStore } from 'react';
import { errorMessage } from '../../api/ApiError';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { AiAnnotationsSection } from './AiAnnotationsSection';
import { exportAnnotations, useImportAnnotations, type DeleteInput } from './api';
import { useAnnotationSession, type AnnotationSession } from './AnnotationSession';
import { ClassNode, CopyButton, HpfRow, NodeRow } from './AnnotationTree';
import { UNDO_KEYS, useAnnotationHistory } from './useAnnotationHistory';

/** Rows of the list of other annotations shown before 'and n more'. */
export const OTHER_LIST_LIMIT = 300;

/**
 * The Annotations tab (doc 3 §2): a collapsible details box (counts, the per-reader filter,
 * GeoJSON export and import), the tree classes → HPFs → point classes with counts, per-node
 * visibility, hover highlight on the map, copy of counts and the delete menus; the other
 * annotations (lines, multilines, text, ellipses, freehand regions); and for celiac studies the
 * 'Celiac Line Measurements' table.
 */
export function AnnotationsTab() {
  const session = useAnnotationSession();
  if (!session) return <NonIdealState icon="annotation" title="No annotations" />;
  return <AnnotationsTabBody session={session} />;
}

function AnnotationsTabBody({ session }: { session: AnnotationSession }) {
  const { store, classes } = session;
  const data = useSyncExternalStore(store.subscribe, () => store.snapshot);
  // Every reader shown: HPFs named and coloured by reader, numbered per reader (issue 29 item 12).
  const tree = useMemo(
    () => buildHpfTree(data.shown, classes.hpf, classes.point, data.readers ?? undefined),
    [data.shown, classes.hpf, classes.point, data.readers],
  );
  const others = useMemo(
    () => data.shown.filter((a) => a.annotationType !== 'HPF' && a.annotationType !== 'POINT'),
    [data.shown],
  );
  const celiacRows = useMemo(
    () => (session.celiac ? celiacTable(classes.multiline, data.shown) : []),
    [session.celiac, classes.multiline, data.shown],
  );
  // A delete goes through the undo history and shows 'Annotation deleted' with Undo (issue 29 item 6);
  // an HPF deleted with its points asks first, naming how many go with it.
  const history = useAnnotationHistory(session);
  const remove = useMutation({
    mutationFn: (input: DeleteInput) => history?.deleteWithUndo(input) ?? Promise.resolve(),
  });
  const [confirming, setConfirming] = useState<{ id: number; points: number } | null>(null);
  const mayDelete = (a: AnnotationView | undefined) =>
    !!a && session.permissions.delete && !data.locked && (a.userId === session.userId || session.systemAdmin);
  const onDelete = (id: number, deleteNested: boolean) => {
    const points = deleteNested
      ? store.snapshot.annotations.filter((a) => a.annotationType === 'POINT' && a.parentId === id).length
      : 0;
    if (points > 0) setConfirming({ id, points });
    else remove.mutate({ id, deleteNested });
  };

  if (session.error) {
    return (
      <Callout intent="danger" title="Unable to fetch annotations">
        {errorMessage(session.error)}
      </Callout>
    );
  }
  if (!data.loaded) return <Spinner size={24} aria-label="Loading annotations" />;

  return (
    <div className="lamina-annotations-tab">
      <DetailsBox session={session} others={others.length} tree={tree} />
      <ConfirmDialog
        isOpen={confirming !== null}
        title="Delete HPF and its points"
        confirmText={`Delete HPF and ${confirming?.points ?? 0} point${confirming?.points === 1 ? '' : 's'}`}
        intent="danger"
        onClose={() => setConfirming(null)}
        onConfirm={() => {
          if (confirming) remove.mutate({ id: confirming.id, deleteNested: true });
          setConfirming(null);
        }}
      >
        <p>
          This HPF holds {confirming?.points ?? 0} point{confirming?.points === 1 ? '' : 's'}; they are deleted with it.
          Undo ({UNDO_KEYS}) brings them back.
        </p>
      </ConfirmDialog>
      {remove.isError && (
        <Callout intent="danger" title={ANNOTATION_MESSAGES.unableToDelete} className="lamina-viewer-action-error">
          {errorMessage(remove.error).replace(/^Unable to delete annotation[.:]?\s*/, '')}
        </Callout>
      )}
      <section aria-label="HPF tree" className="lamina-annotation-tree">
        <div className="lamina-viewer-box-head">
          <strong>
            HPFs ({tree.totalHpfs}) · points ({tree.totalPoints})
          </strong>
          <CopyButton text={() => hpfTreeTsv(tree)} label="Copy counts" />
        </div>
        {tree.classes.length === 0 && !tree.orphan && <p className="bp6-text-muted">No HPFs or points.</p>}
        <ul className="lamina-tree" role="tree" aria-label="Annotation tree">
          {tree.classes.map((c) => (
            <ClassNode
              key={c.classId ?? 'other'}
              node={c}
              store={store}
              mayDelete={(id) => mayDelete(store.get(id))}
              onDelete={onDelete}
            />
          ))}
          {tree.orphan && <HpfRow hpf={tree.orphan} store={store} mayDelete={() => false} onDelete={onDelete} />}
        </ul>
      </section>
      <section aria-label="Other annotations" className="lamina-annotation-others">
        <div className="lamina-viewer-box-head">
          <strong>Other annotations ({others.length})</strong>
        </div>
        {others.length === 0 ? (
          <p className="bp6-text-muted">No lines, text, ellipses or freehand regions.</p>
        ) : (
          <ul className="lamina-tree">
            {others.slice(0, OTHER_LIST_LIMIT).map((a) => (
              <NodeRow
                key={a.id}
                store={store}
                node={{ kind: 'annotation', id: a.id }}
                swatch={a.color}
                name={describe(a, session)}
                actions={
                  mayDelete(a) && (
                    <Button
                      size="small"
                      variant="minimal"
                      icon="trash"
                      aria-label={`Delete ${describe(a, session)}`}
                      title="Delete"
                      onClick={() => onDelete(a.id, false)}
                    />
                  )
                }
              />
            ))}
            {others.length > OTHER_LIST_LIMIT && (
              <li className="bp6-text-muted">and {others.length - OTHER_LIST_LIMIT} more</li>
            )}
          </ul>
        )}
      </section>
      {session.celiac && (
        <section aria-label="Celiac Line Measurements">
          <div className="lamina-viewer-box-head">
            <strong>Celiac Line Measurements</strong>
          </div>
          <HTMLTable compact striped className="lamina-celiac-table" aria-label="Celiac Line Measurements">
            <thead>
              <tr>
                <th>Class</th>
                <th>Villus Height</th>
                <th>Crypt Depth</th>
                <th>Vh:Cd</th>
              </tr>
            </thead>
            <tbody>
              {celiacRows.map((row) => (
                <tr key={row.classId}>
                  <td>
                    <span className="lamina-class-swatch" style={{ background: row.color }} aria-hidden="true" />{' '}
                    {row.name}
                  </td>
                  <td>{row.villusHeight === null ? '—' : formatLengthUm(row.villusHeight)}</td>
                  <td>{row.cryptDepth === null ? '—' : formatLengthUm(row.cryptDepth)}</td>
                  <td>{row.ratio}</td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
        </section>
      )}
      {session.ai && <AiAnnotationsSection ai={session.ai} />}
    </div>
  );
}

/** A one-line name of an annotation of the list: type, class, category, length or text, a region's area. */
export function describe(a: AnnotationView, session: Pick<AnnotationSession, 'classes'>): string {
  const cls = (list: readonly { id: number; name: string }[]) =>
    list.find((c) => c.id === a.annotationClassId)?.name ?? null;
  switch (a.annotationType) {
    case 'LINE':
      return `Line ${formatLengthUm(a.length ?? 0)}`;
    case 'MULTILINE': {
      const name = cls(session.classes.multiline) ?? 'Line';
      const category = a.multilineCategory ? ` ${MULTILINE_CATEGORY_LABELS[a.multilineCategory]}` : '';
      return `${name}${category} ${formatLengthUm(a.length ?? 0)}`;
    }
    case 'TEXT':
      return `Text “${a.text ?? ''}”`;
    case 'ELLIPSE':
      return `Ellipse${a.text ? ` “${a.text}”` : ''}${regionSize(a)}`;
    case 'FREEHAND':
      return `${`Freehand ${cls(session.classes.freehand) ?? ''}`.trim()}${regionSize(a)}`;
    default:
      return a.annotationType;
  }
}

/** A region's area and perimeter for its row (issue 29 item 4): " 12 345 µm² · 456 µm", or nothing. */
function regionSize(a: AnnotationView): string {
  if (a.area === null) return '';
  return ` ${formatAreaUm2(a.area)}${a.perimeter === null ? '' : ` · ${formatLengthUm(a.perimeter)}`}`;
}

/** The all-readers view's legend: each reader's name beside the colour the map draws them in. */
function ReaderLegend({ readers }: { readers: readonly ReaderKey[] }) {
  return (
    <ul className="lamina-reader-legend" aria-label="Reader colours">
      {readers.map((r) => (
        <li key={r.id} data-color={r.color}>
          <span className="lamina-class-swatch" style={{ background: r.color }} aria-hidden="true" />
          {r.displayName}
        </li>
      ))}
    </ul>
  );
}

function DetailsBox({
  session,
  others,
  tree,
}: {
  session: AnnotationSession;
  others: number;
  tree: { totalHpfs: number; totalPoints: number };
}) {
  const { store } = session;
  const data = useSyncExternalStore(store.subscribe, () => store.snapshot);
  const [open, setOpen] = useState(true);
  const detailsId = useId();
  const importer = useImportAnnotations(session.imageId);
  const [exportError, setExportError] = useState<string | null>(null);
  const showFilter = data.authors.length > 1 || !session.reader;
  return (
    <section className="lamina-viewer-box" aria-label="Annotation details">
      <div className="lamina-viewer-box-head">
        <strong>Annotation details</strong>
        <Button
          size="small"
          variant="minimal"
          icon={open ? 'chevron-up' : 'chevron-down'}
          text={open ? 'Hide details' : 'Show details'}
          aria-expanded={open}
          aria-controls={detailsId}
          onClick={() => setOpen(!open)}
        />
      </div>
      <div id={detailsId} hidden={!open}>
        <p>
          {data.shown.length} annotation{data.shown.length === 1 ? '' : 's'}: {tree.totalHpfs} HPF
          {tree.totalHpfs === 1 ? '' : 's'}, {tree.totalPoints} point{tree.totalPoints === 1 ? '' : 's'}, {others} other
          {others === 1 ? '' : 's'}
        </p>
        {data.locked && session.permissions.create && (
          <Callout intent="warning" icon="lock" compact>
            {ANNOTATION_MESSAGES.lockedScored}
          </Callout>
        )}
        {showFilter && (
          <label className="lamina-reader-filter">
            Reader{' '}
            <HTMLSelect
              aria-label="Reader"
              value={data.author === null ? '' : String(data.author)}
              onChange={(e) => store.setAuthor(e.target.value === '' ? null : Number(e.target.value))}
              options={[
                { value: '', label: 'All readers' },
                ...data.authors.map((a) => ({ value: String(a.id), label: a.displayName })),
              ]}
            />
          </label>
        )}
        {data.readers && <ReaderLegend readers={data.readers} />}
        <div className="lamina-viewer-box-actions">
          <Button
            size="small"
            icon="export"
            text="Export GeoJSON"
            onClick={() => {
              setExportError(null);
              exportAnnotations(session.imageId).catch((e: unknown) => setExportError(errorMessage(e)));
            }}
          />
          {session.permissions.create && !data.locked && (
            <FileInput
              size="small"
              text={importer.isPending ? 'Importing…' : 'Import GeoJSON…'}
              buttonText="Browse"
              disabled={importer.isPending}
              inputProps={{
                accept: '.geojson,.json,application/geo+json,application/json',
                'aria-label': 'Import GeoJSON',
              }}
              onInputChange={(e) => {
                const input = e.currentTarget;
                const file = input.files?.[0];
                if (file) importer.mutate(file);
                input.value = '';
              }}
            />
          )}
        </div>
        {importer.isSuccess && (
          <Callout intent="success" compact>
            {importer.data.message}
          </Callout>
        )}
        {importer.isError && (
          <Callout intent="danger" compact title="Unable to import annotations">
            {errorMessage(importer.error)}
          </Callout>
        )}
        {exportError && (
          <Callout intent="danger" compact title="Unable to export annotations">
            {exportError}
          </Callout>
        )}
      </div>
    </section>
  );
}
