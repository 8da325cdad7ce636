import {
  Button,
  Callout,
  Dialog,
  DialogBody,
  DialogFooter,
  FormGroup,
  HTMLSelect,
  InputGroup,
  Menu,
  MenuItem,
  Tag,
} from '@blueprintjs/core';
import {
  CASE_FIELD_RULES,
  MANUAL_READER_PERMISSION,
  TEXT_LIMITS,
  caseFieldError,
  caseRequiredError,
  mayViewCaseField,
  normaliseCaseField,
  type CaseField,
  type CaseImage,
  type CaseReader,
  type CaseView,
  type EditCaseRequest,
  type StudyView,
} from '@lamina/domain';
import { useId, useMemo, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { showToast } from '../../components/appToaster';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { useAssignableImages, useCreateCase, useEditCase, useStudyReaders, useSuggestedReaders } from './api';

/** The dialog's fields in order; Histo Procedure ID only on edit (doc 2 §2.6). */
const FIELDS: readonly CaseField[] = ['procId', 'histoProcedureId', 'subjectId', 'siteId', 'visitId'];

type Values = Record<CaseField, string>;

interface CaseDialogProps {
  study: Pick<StudyView, 'id' | 'visitIds' | 'labVisitIds'>;
  /** The case to edit; without it the dialog creates one. */
  existing?: CaseView;
  onClose: () => void;
  onSaved?: (saved: CaseView) => void;
}

const sameIds = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && [...a].sort().every((id, i) => id === [...b].sort()[i]);

/** A reason input beside a changed field (edit mode). */
function ReasonInput({ label, value, onChange }: { label: string; value: string; onChange: (v: string) => void }) {
  const missing = value.trim() === '';
  return (
    <InputGroup
      className="lamina-case-reason"
      aria-label={`Reason for change: ${label}`}
      placeholder="Reason for change (required)"
      intent={missing ? 'danger' : 'none'}
      value={value}
      maxLength={TEXT_LIMITS.reason}
      onValueChange={onChange}
    />
  );
}

/**
 * Create Case and Edit Case (doc 2 §2.6; 500 px): Endo Procedure ID, Histo Procedure ID (edit only),
 * Subject, Site and Visit ID (each only for users who may see it; Visit ID from the study's visits
 * when it lists any), readers (with the manual-assignment permission; suggestions for the subject)
 * and images. On edit every changed field and list needs its reason; Save stays disabled until all
 * are given and no field has an error. Only changed fields are sent.
 */
export function CaseDialog({ study, existing, onClose, onSaved }: CaseDialogProps) {
  const user = useUserInfo().data;
  const actions = useMemo(() => user?.actions ?? [], [user]);
  const actionSet = useMemo(() => new Set(actions), [actions]);
  const create = useCreateCase();
  const edit = useEditCase();
  const mutation = existing ? edit : create;
  const idPrefix = useId();

  const initial: Values = {
    procId: existing?.procId ?? '',
    histoProcedureId: existing?.histoProcedureId ?? '',
    subjectId: existing?.subjectId ?? '',
    siteId: existing?.siteId ?? '',
    visitId: existing?.visitId ?? '',
  };
  const [values, setValues] = useState<Values>(initial);
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [readers, setReaders] = useState<CaseReader[]>(existing?.readers ?? []);
  const [images, setImages] = useState<CaseImage[]>(existing?.images ?? []);
  const [readerSearch, setReaderSearch] = useState('');
  /** Fields the user has typed in: their messages show from then on (not on an empty new form). */
  const [touched, setTouched] = useState<ReadonlySet<CaseField>>(new Set());
  const [imageSearch, setImageSearch] = useState('');

  const canAssignReaders = actions.includes(MANUAL_READER_PERMISSION);
  const shown = FIELDS.filter((f) => (f !== 'histoProcedureId' || existing) && mayViewCaseField(actionSet, f));
  const readerName = useDebouncedValue(readerSearch.trim());
  const imageName = useDebouncedValue(imageSearch.trim());
  const studyReaders = useStudyReaders(study.id, readerName, canAssignReaders);
  const subject = normaliseCaseField(values.subjectId) ?? '';
  const suggested = useSuggestedReaders(study.id, subject, canAssignReaders);
  const assignable = useAssignableImages(
    study.id,
    imageName,
    images.map((i) => i.id),
    true,
  );

  const errors: Partial<Record<CaseField, string>> = {};
  for (const field of shown) {
    const value = normaliseCaseField(values[field]);
    const message =
      (!existing || field === 'procId' ? caseRequiredError(field, value) : null) ?? caseFieldError(field, value);
    if (message) errors[field] = message;
  }
  const changed = (field: CaseField) => normaliseCaseField(values[field]) !== normaliseCaseField(initial[field]);
  const readersChanged = !sameIds(
    readers.map((r) => r.id),
    existing?.readers.map((r) => r.id) ?? [],
  );
  const imagesChanged = !sameIds(
    images.map((i) => i.id),
    existing?.images.map((i) => i.id) ?? [],
  );
  const needsReason = existing
    ? [...shown.filter(changed), ...(readersChanged ? ['readers'] : []), ...(imagesChanged ? ['images'] : [])]
    : [];
  const missingReason = needsReason.some((key) => !(reasons[key] ?? '').trim());
  const hasChanges = !existing || needsReason.length > 0;
  const canSave = Object.keys(errors).length === 0 && !missingReason && hasChanges && !mutation.isPending;

  function save() {
    if (!canSave) return;
    const done = (response: { message: string; case: CaseView }) => {
      void showToast(response.message);
      onSaved?.(response.case);
      onClose();
    };
    if (!existing) {
      create.mutate(
        {
          studyId: study.id,
          procId: values.procId.trim(),
          subjectId: normaliseCaseField(values.subjectId),
          siteId: normaliseCaseField(values.siteId),
          visitId: normaliseCaseField(values.visitId),
          readers: readers.map((r) => r.id),
          images: images.map((i) => i.id),
        },
        { onSuccess: done },
      );
      return;
    }
    const changes: EditCaseRequest = {};
    for (const field of shown.filter(changed))
      changes[field] = { value: normaliseCaseField(values[field]), reasonForChange: reasons[field]?.trim() ?? '' };
    if (readersChanged)
      changes.readers = { ids: readers.map((r) => r.id), reasonForChange: reasons.readers?.trim() ?? '' };
    if (imagesChanged) changes.images = { ids: images.map((i) => i.id), reasonForChange: reasons.images?.trim() ?? '' };
    edit.mutate({ id: existing.id, changes }, { onSuccess: done });
  }

  const setReason = (key: string) => (value: string) => setReasons((r) => ({ ...r, [key]: value }));
  const visitOptions = study.visitIds.map((visit, i) => ({
    value: visit,
    label: study.labVisitIds[i] ? `${visit} → ${study.labVisitIds[i]}` : visit,
  }));
  const readerChoices = ((readerName ? studyReaders.data : suggested.data) ?? []).filter(
    (r) => !readers.some((x) => x.id === r.id),
  );
  const readersLoading = readerName ? studyReaders.isFetching : suggested.isFetching;

  return (
    <Dialog
      isOpen
      title={existing ? 'Edit Case' : 'Create Case'}
      onClose={mutation.isPending ? undefined : onClose}
      style={{ width: 500 }}
      className="lamina-case-dialog"
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save();
        }}
      >
        <DialogBody>
          {shown.map((field) => {
            const id = `${idPrefix}-${field}`;
            const { label } = CASE_FIELD_RULES[field];
            const error = touched.has(field) ? errors[field] : undefined;
            return (
              <FormGroup key={field} label={label} labelFor={id} intent={error ? 'danger' : 'none'} helperText={error}>
                {field === 'visitId' && visitOptions.length > 0 ? (
                  <HTMLSelect
                    id={id}
                    fill
                    value={values.visitId}
                    onChange={(event) => {
                      const value = event.currentTarget.value;
                      setValues((v) => ({ ...v, visitId: value }));
                    }}
                    options={[{ value: '', label: 'Choose a visit' }, ...visitOptions]}
                  />
                ) : (
                  <InputGroup
                    id={id}
                    value={values[field]}
                    intent={error ? 'danger' : 'none'}
                    onValueChange={(value) => setValues((v) => ({ ...v, [field]: value }))}
                    onBlur={() => setTouched((t) => new Set(t).add(field))}
                  />
                )}
                {existing && changed(field) && (
                  <ReasonInput label={label} value={reasons[field] ?? ''} onChange={setReason(field)} />
                )}
              </FormGroup>
            );
          })}

          {canAssignReaders && (
            <FormGroup label="Readers" labelFor={`${idPrefix}-readers`}>
              <div className="lamina-chips" aria-label="Assigned readers">
                {readers.length === 0 && <span className="bp6-text-muted">No readers assigned</span>}
                {readers.map((r) => (
                  <Tag
                    key={r.id}
                    onRemove={() => setReaders((list) => list.filter((x) => x.id !== r.id))}
                    aria-label={r.displayName}
                  >
                    {r.displayName}
                  </Tag>
                ))}
              </div>
              <InputGroup
                id={`${idPrefix}-readers`}
                type="search"
                leftIcon="search"
                placeholder="Search readers"
                value={readerSearch}
                onValueChange={setReaderSearch}
              />
              <Menu className="lamina-pick-list" aria-label={readerName ? 'Matching readers' : 'Suggested readers'}>
                {!readerName && <li className="bp6-menu-header">Suggested readers</li>}
                {readersLoading && <MenuItem disabled text="Loading ..." />}
                {readerChoices.slice(0, 6).map((r) => (
                  <MenuItem
                    key={r.id}
                    icon="add"
                    text={r.displayName}
                    label={`${r.numReadCases}/${r.numTotalCases} read`}
                    onClick={() => setReaders((list) => [...list, r])}
                  />
                ))}
                {readerChoices.length === 0 && !readersLoading && <MenuItem disabled text="No results" />}
              </Menu>
              {existing && readersChanged && (
                <ReasonInput label="Readers" value={reasons.readers ?? ''} onChange={setReason('readers')} />
              )}
            </FormGroup>
          )}

          <FormGroup label="Images" labelFor={`${idPrefix}-images`}>
            <div className="lamina-chips" aria-label="Images of the case">
              {images.length === 0 && <span className="bp6-text-muted">No images</span>}
              {images.map((i) => (
                <Tag key={i.id} onRemove={() => setImages((list) => list.filter((x) => x.id !== i.id))}>
                  {i.name}
                </Tag>
              ))}
            </div>
            <InputGroup
              id={`${idPrefix}-images`}
              type="search"
              leftIcon="search"
              placeholder="Search images waiting for a case"
              value={imageSearch}
              onValueChange={setImageSearch}
            />
            <Menu className="lamina-pick-list" aria-label="Images waiting for a case">
              {assignable.isFetching && <MenuItem disabled text="Loading ..." />}
              {(assignable.data ?? []).slice(0, 6).map((i) => (
                <MenuItem key={i.id} icon="add" text={i.name} onClick={() => setImages((list) => [...list, i])} />
              ))}
              {!assignable.isFetching && (assignable.data ?? []).length === 0 && (
                <MenuItem disabled text="No results" />
              )}
            </Menu>
            {existing && imagesChanged && (
              <ReasonInput label="Images" value={reasons.images ?? ''} onChange={setReason('images')} />
            )}
          </FormGroup>

          {mutation.isError && (
            <Callout intent="danger" role="alert" className="lamina-dialog-error">
              {errorMessage(mutation.error)}
            </Callout>
          )}
        </DialogBody>
        <DialogFooter
          actions={
            <>
              <Button text="Cancel" variant="minimal" onClick={onClose} disabled={mutation.isPending} />
              <Button
                type="submit"
                intent="primary"
                text={existing ? 'Save' : 'Create case'}
                loading={mutation.isPending}
                disabled={!canSave}
              />
            </>
          }
        />
      </form>
    </Dialog>
  );
}
