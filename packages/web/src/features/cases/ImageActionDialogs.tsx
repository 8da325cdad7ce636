import {
  Button,
  Callout,
  Dialog,
  DialogBody,
  DialogFooter,
  FormGroup,
  HTMLSelect,
  HTMLTable,
  InputGroup,
  Menu,
  MenuItem,
  Radio,
  RadioGroup,
} from '@blueprintjs/core';
import {
  CASE_ASSIGNABLE,
  CASE_MESSAGES,
  CASE_STATUS_LABELS,
  EDITABLE_IMAGE_FIELDS,
  IMAGE_ACTION_MESSAGES,
  IMAGE_FIELD_LABELS,
  TEXT_LIMITS,
  archiveImageConfirmation,
  copyImageName,
  imageFieldError,
  isEmptyValue,
  mayEditImageField,
  type EditImageRequest,
  type EditableImageField,
  type MoveChange,
  type StudyImageRow,
  type StudyView,
} from '@lamina/domain';
import { useId, useMemo, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useStudyList } from '../../api/studies';
import { useUserInfo } from '../../api/users';
import { showToast } from '../../components/appToaster';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { DialogError, FormDialogFooter } from '../../components/FormDialogParts';
import { useCaseSearch, useImageAction } from './api';
import { ReasonDialog } from './ReasonDialog';

export type ImageDialogKind = 'edit' | 'copy' | 'move' | 'archive' | 'assign';

/** What the image dialogs need of a row: the study page's, or Image Management's (status when viewable). */
export type ImageDialogTarget = Pick<StudyImageRow, 'id' | 'name' | 'accessionNumber' | 'biopsyLocation' | 'caseId'> & {
  status?: StudyImageRow['status'] | undefined;
};

interface ImageDialogProps {
  study: StudyView;
  image: ImageDialogTarget;
  onClose: () => void;
}

const closeWith = (onClose: () => void) => (response: { message: string }) => {
  void showToast(response.message);
  onClose();
};

/**
 * Edit Image (doc 2 §2.7, §5; 600 px): File Name (read-only without the file-name and pass-lab-QC
 * permissions), Accession # and Anatomical Segment (the study's segments when it lists any). A
 * changed field with a prior value needs its reason; only changed fields are sent.
 */
export function EditImageDialog({
  study,
  image,
  onClose,
}: {
  study: StudyView;
  /** The study page's row, or an image of a case (the case page). */
  image: Pick<StudyImageRow, 'id' | 'name' | 'accessionNumber' | 'biopsyLocation'>;
  onClose: () => void;
}) {
  const actions = new Set(useUserInfo().data?.actions ?? []);
  const mutation = useImageAction(study.id);
  const prefix = useId();
  const initial: Record<EditableImageField, string> = {
    imageName: image.name,
    accessionNumber: image.accessionNumber ?? '',
    biopsyLocation: image.biopsyLocation ?? '',
  };
  const [values, setValues] = useState(initial);
  const [reasons, setReasons] = useState<Partial<Record<EditableImageField, string>>>({});
  const changed = EDITABLE_IMAGE_FIELDS.filter((f) => values[f].trim() !== initial[f].trim());
  const errors = Object.fromEntries(
    EDITABLE_IMAGE_FIELDS.map((f) => [f, imageFieldError(f, values[f].trim() === '' ? null : values[f].trim())]),
  ) as Record<EditableImageField, string | null>;
  const needsReason = changed.filter((f) => !isEmptyValue(initial[f]));
  const ready =
    changed.length > 0 &&
    changed.every((f) => !errors[f]) &&
    needsReason.every((f) => (reasons[f] ?? '').trim() !== '') &&
    !mutation.isPending;

  function save() {
    if (!ready) return;
    const changes: EditImageRequest = {};
    for (const f of changed)
      changes[f] = {
        value: values[f].trim() === '' ? null : values[f].trim(),
        reasonForChange: reasons[f]?.trim() ?? null,
      };
    mutation.mutate({ kind: 'edit', imageId: image.id, changes }, { onSuccess: closeWith(onClose) });
  }

  return (
    <Dialog isOpen title="Edit Image" onClose={mutation.isPending ? undefined : onClose} style={{ width: 600 }}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save();
        }}
      >
        <DialogBody>
          {EDITABLE_IMAGE_FIELDS.map((field) => {
            const id = `${prefix}-${field}`;
            const editable = mayEditImageField(actions, field);
            const error = changed.includes(field) ? errors[field] : null;
            return (
              <FormGroup
                key={field}
                label={IMAGE_FIELD_LABELS[field]}
                labelFor={id}
                intent={error ? 'danger' : 'none'}
                helperText={error ?? (editable ? undefined : 'Read-only for your role')}
              >
                {field === 'biopsyLocation' && study.anatomicalSegments.length > 0 ? (
                  <HTMLSelect
                    id={id}
                    fill
                    disabled={!editable}
                    value={values.biopsyLocation}
                    onChange={(event) => setValues((v) => ({ ...v, biopsyLocation: event.currentTarget.value }))}
                    options={[
                      { value: '', label: 'Choose a segment' },
                      ...study.anatomicalSegments.map((s) => ({ value: s, label: s })),
                    ]}
                  />
                ) : (
                  <InputGroup
                    id={id}
                    readOnly={!editable}
                    value={values[field]}
                    maxLength={field === 'imageName' ? TEXT_LIMITS.fileName : TEXT_LIMITS.identifier}
                    onValueChange={(value) => setValues((v) => ({ ...v, [field]: value }))}
                  />
                )}
                {needsReason.includes(field) && (
                  <InputGroup
                    className="lamina-case-reason"
                    aria-label={`Reason for change: ${IMAGE_FIELD_LABELS[field]}`}
                    placeholder="Reason for change (required)"
                    intent={(reasons[field] ?? '').trim() ? 'none' : 'danger'}
                    value={reasons[field] ?? ''}
                    onValueChange={(value) => setReasons((r) => ({ ...r, [field]: value }))}
                  />
                )}
              </FormGroup>
            );
          })}
          <DialogError error={mutation.isError ? errorMessage(mutation.error) : null} />
        </DialogBody>
        <FormDialogFooter submitText="Save" pending={mutation.isPending} disabled={!ready} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** Copy Image (doc 2 §5): a name prefilled from the image's name; 'Copy image' and Cancel. */
export function CopyImageDialog({ study, image, onClose }: ImageDialogProps) {
  const mutation = useImageAction(study.id);
  const [name, setName] = useState(copyImageName(image.name));
  const id = useId();
  const error = imageFieldError('imageName', name.trim() === '' ? null : name.trim());
  return (
    <Dialog isOpen title="Copy Image" onClose={mutation.isPending ? undefined : onClose} style={{ width: 600 }}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!error)
            mutation.mutate({ kind: 'copy', imageId: image.id, name: name.trim() }, { onSuccess: closeWith(onClose) });
        }}
      >
        <DialogBody>
          <p>The copy shares the stored slide: nothing is uploaded or processed again.</p>
          <FormGroup label="Name of the copy" labelFor={id} intent={error ? 'danger' : 'none'} helperText={error}>
            <InputGroup id={id} value={name} onValueChange={setName} maxLength={TEXT_LIMITS.fileName} autoFocus />
          </FormGroup>
          <DialogError error={mutation.isError ? errorMessage(mutation.error) : null} />
        </DialogBody>
        <FormDialogFooter
          submitText="Copy image"
          pending={mutation.isPending}
          disabled={error !== null}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}

/** Archive Image (doc 2 §5): 'Are you sure you want to archive {name}?'; Confirm waits for a reason. */
export function ArchiveImageDialog({ study, image, onClose }: ImageDialogProps) {
  const mutation = useImageAction(study.id);
  return (
    <ReasonDialog
      title="Archive Image"
      confirmText="Confirm"
      intent="danger"
      width={600}
      isPending={mutation.isPending}
      error={mutation.isError ? errorMessage(mutation.error) : null}
      onConfirm={(reason) =>
        mutation.mutate({ kind: 'archive', imageId: image.id, reason }, { onSuccess: closeWith(onClose) })
      }
      onClose={onClose}
    >
      <p>{archiveImageConfirmation(image.name)}</p>
    </ReasonDialog>
  );
}

/** The case picker of Assign to Case and Move Image: cases outside `allowed` are disabled with the tooltip. */
function CasePicker({
  studyId,
  purpose,
  selected,
  onSelect,
  excludeId,
}: {
  studyId: number;
  purpose: 'assign' | 'move';
  selected: number | null;
  onSelect: (id: number, label: string) => void;
  excludeId: number | null;
}) {
  const [text, setText] = useState('');
  const search = useDebouncedValue(text.trim());
  const cases = useCaseSearch(studyId, search, purpose);
  const id = useId();
  return (
    <FormGroup label="Case" labelFor={id}>
      <InputGroup
        id={id}
        type="search"
        leftIcon="search"
        placeholder="Search by Procedure ID"
        value={text}
        onValueChange={setText}
      />
      <Menu className="lamina-pick-list" aria-label="Cases">
        {cases.isFetching && <MenuItem disabled text="Loading ..." />}
        {(cases.data ?? [])
          .filter((c) => c.caseId !== excludeId)
          .map((c) => {
            const assignable = CASE_ASSIGNABLE.includes(c.caseStatus);
            const label = c.procId ?? `Case ${c.caseId}`;
            return (
              <MenuItem
                key={c.caseId}
                text={label}
                label={CASE_STATUS_LABELS[c.caseStatus]}
                active={selected === c.caseId}
                disabled={!assignable}
                htmlTitle={assignable ? undefined : CASE_MESSAGES.notAssignableStatus}
                icon={selected === c.caseId ? 'tick' : 'blank'}
                onClick={() => onSelect(c.caseId, label)}
              />
            );
          })}
        {!cases.isFetching && (cases.data ?? []).length === 0 && <MenuItem disabled text="No results" />}
      </Menu>
    </FormGroup>
  );
}

/** Assign to Case (doc 2 §5): a chosen case and a non-empty reason. */
export function AssignToCaseDialog({ study, image, onClose }: ImageDialogProps) {
  const mutation = useImageAction(study.id);
  const [target, setTarget] = useState<number | null>(null);
  return (
    <ReasonDialog
      title="Assign to Case"
      confirmText="Assign"
      width={600}
      ready={target !== null}
      isPending={mutation.isPending}
      error={mutation.isError ? errorMessage(mutation.error) : null}
      onConfirm={(reason) =>
        target !== null &&
        mutation.mutate(
          { kind: 'assign', imageId: image.id, caseId: target, reason },
          { onSuccess: closeWith(onClose) },
        )
      }
      onClose={onClose}
    >
      <p>
        Assign <strong>{image.name}</strong> to a case of this study.
      </p>
      <CasePicker
        studyId={study.id}
        purpose="assign"
        selected={target}
        onSelect={(id) => setTarget(id)}
        excludeId={image.caseId}
      />
    </ReasonDialog>
  );
}

function ChangesTable({ changes }: { changes: readonly MoveChange[] }) {
  if (changes.length === 0) return null;
  return (
    <HTMLTable compact className="lamina-move-changes" aria-label="Data that will change">
      <thead>
        <tr>
          <th>Data point</th>
          <th>From</th>
          <th>To</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => (
          <tr key={c.label}>
            <td>{c.label}</td>
            <td>{c.from ?? '-'}</td>
            <td>{c.to ?? '-'}</td>
          </tr>
        ))}
      </tbody>
    </HTMLTable>
  );
}

/**
 * Move Image (doc 2 §4, §5): a form (another study — the current one disabled — or another case of
 * this study, and a reason), then the confirmation 'Are you sure you want to move this image?' with
 * the data points that will change, then the move. Refused for Ready For Reading and Complete.
 */
export function MoveImageDialog({ study, image, onClose }: ImageDialogProps) {
  const preview = useImageAction(study.id);
  const move = useImageAction(study.id);
  const [mode, setMode] = useState<'study' | 'case'>('study');
  const [studyTarget, setStudyTarget] = useState<number | null>(null);
  const [caseTarget, setCaseTarget] = useState<number | null>(null);
  const [reason, setReason] = useState('');
  const [changes, setChanges] = useState<MoveChange[] | null>(null);
  const studies = useStudyList({ pageIndex: 0, pageSize: 100, sort: 'name' });
  const ids = { mode: useId(), study: useId(), reason: useId() };
  const target = mode === 'study' ? studyTarget : caseTarget;
  const blocked = image.status === 'READY_FOR_READING' || image.status === 'COMPLETE';
  const ready = target !== null && reason.trim() !== '' && !blocked;
  const kind = mode === 'study' ? ('moveStudy' as const) : ('moveCase' as const);
  const studyOptions = useMemo(
    () =>
      (studies.data?.studies ?? []).map((s) => ({
        value: String(s.id),
        label: s.id === study.id ? `${s.name} (current)` : s.name,
        disabled: s.id === study.id,
      })),
    [studies.data, study.id],
  );

  if (changes !== null && target !== null) {
    return (
      <Dialog isOpen title="Move Image" onClose={move.isPending ? undefined : onClose} style={{ width: 600 }}>
        <DialogBody>
          <p>{IMAGE_ACTION_MESSAGES.moveConfirmation}</p>
          <Callout intent="warning" title="These data points will change">
            <ChangesTable changes={changes} />
          </Callout>
          <DialogError error={move.isError ? errorMessage(move.error) : null} />
        </DialogBody>
        <DialogFooter
          actions={
            <>
              <Button text="Back" variant="minimal" onClick={() => setChanges(null)} disabled={move.isPending} />
              <Button
                intent="primary"
                text="Move"
                loading={move.isPending}
                onClick={() =>
                  move.mutate(
                    { kind, imageId: image.id, target, reason: reason.trim() },
                    { onSuccess: closeWith(onClose) },
                  )
                }
              />
            </>
          }
        />
      </Dialog>
    );
  }

  return (
    <Dialog isOpen title="Move Image" onClose={preview.isPending ? undefined : onClose} style={{ width: 600 }}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!ready || target === null) return;
          preview.mutate(
            { kind, imageId: image.id, target, reason: reason.trim(), preview: true },
            { onSuccess: (response) => setChanges(response.changes ?? []) },
          );
        }}
      >
        <DialogBody>
          {blocked && (
            <Callout intent="warning" role="status">
              {IMAGE_ACTION_MESSAGES.moveBlocked}
            </Callout>
          )}
          <p>
            Move <strong>{image.name}</strong>
          </p>
          <RadioGroup
            name={ids.mode}
            inline
            selectedValue={mode}
            onChange={(event) => setMode(event.currentTarget.value as 'study' | 'case')}
          >
            <Radio label="To another study" value="study" />
            <Radio label="To another case" value="case" />
          </RadioGroup>
          {mode === 'study' ? (
            <FormGroup label="Study" labelFor={ids.study}>
              <HTMLSelect
                id={ids.study}
                fill
                value={studyTarget === null ? '' : String(studyTarget)}
                onChange={(event) =>
                  setStudyTarget(event.currentTarget.value ? Number(event.currentTarget.value) : null)
                }
                options={[{ value: '', label: studies.isPending ? 'Loading ...' : 'Choose a study' }, ...studyOptions]}
              />
            </FormGroup>
          ) : (
            <CasePicker
              studyId={study.id}
              purpose="move"
              selected={caseTarget}
              onSelect={(id) => setCaseTarget(id)}
              excludeId={image.caseId}
            />
          )}
          <FormGroup label="Reason for change" labelFor={ids.reason} labelInfo="(required)">
            <InputGroup id={ids.reason} value={reason} onValueChange={setReason} maxLength={TEXT_LIMITS.reason} />
          </FormGroup>
          <DialogError error={preview.isError ? errorMessage(preview.error) : null} />
        </DialogBody>
        <FormDialogFooter submitText="Next" pending={preview.isPending} disabled={!ready} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** The dialog of one image row action. */
export function ImageActionDialog({ kind, ...props }: ImageDialogProps & { kind: ImageDialogKind }) {
  switch (kind) {
    case 'edit':
      return <EditImageDialog {...props} />;
    case 'copy':
      return <CopyImageDialog {...props} />;
    case 'archive':
      return <ArchiveImageDialog {...props} />;
    case 'move':
      return <MoveImageDialog {...props} />;
    case 'assign':
      return <AssignToCaseDialog {...props} />;
  }
}
