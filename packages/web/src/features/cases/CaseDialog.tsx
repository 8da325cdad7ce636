import { Dialog, DialogBody, FormGroup, HTMLSelect, InputGroup, Menu, MenuItem, Tag, Tooltip } from '@blueprintjs/core';
import {
  CASE_FIELD_RULES,
  CASE_MESSAGES,
  MANUAL_READER_PERMISSION,
  TEXT_LIMITS,
  caseFieldError,
  caseRequiredError,
  imageStatusOnAssign,
  mayViewCaseField,
  normaliseCaseField,
  type CaseField,
  type CaseImage,
  type CaseReader,
  type CaseView,
  type EditCaseRequest,
  type StudyView,
} from '@lamina/domain';
import { useId, useMemo, useState, type ReactNode } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { showToast } from '../../components/appToaster';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { DialogError, FormDialogFooter } from '../../components/FormDialogParts';
import { SaveBlockers, saveBlockerGroups } from '../../components/SaveBlockers';
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

/** Items to pick: the chosen ones as removable chips, a search, and the matches to add (six at most). */
function PickField(props: {
  id: string;
  label: string;
  chipsLabel: string;
  chips: { key: number; text: string }[];
  emptyText: string;
  onRemove: (key: number) => void;
  search: string;
  onSearch: (text: string) => void;
  placeholder: string;
  listLabel: string;
  listHeader?: string | undefined;
  loading: boolean;
  options: { key: number; text: string; label?: string; onPick: () => void }[];
  /** Why the list cannot change now (the server would refuse): the search is disabled with it as tooltip. */
  locked?: string | null | undefined;
  children?: ReactNode;
}) {
  const locked = props.locked ?? null;
  const search = (
    <InputGroup
      id={props.id}
      type="search"
      leftIcon="search"
      placeholder={props.placeholder}
      value={props.search}
      onValueChange={props.onSearch}
      disabled={locked !== null}
      aria-description={locked ?? undefined}
      // A disabled input takes no hover: the tooltip's target around it does.
      style={locked !== null ? { pointerEvents: 'none' } : undefined}
    />
  );
  return (
    <FormGroup label={props.label} labelFor={props.id} data-anchor={props.id}>
      <div className="lamina-chips" aria-label={props.chipsLabel}>
        {props.chips.length === 0 && <span className="bp6-text-muted">{props.emptyText}</span>}
        {props.chips.map((chip) => (
          <Tag
            key={chip.key}
            onRemove={locked === null ? () => props.onRemove(chip.key) : undefined}
            aria-label={chip.text}
          >
            {chip.text}
          </Tag>
        ))}
      </div>
      {locked === null ? (
        search
      ) : (
        <Tooltip content={locked} placement="top" fill>
          {search}
        </Tooltip>
      )}
      {locked === null && (
        <Menu className="lamina-pick-list" aria-label={props.listLabel}>
          {props.listHeader && <li className="bp6-menu-header">{props.listHeader}</li>}
          {props.loading && <MenuItem disabled text="Loading ..." />}
          {props.options.slice(0, 6).map((option) => (
            <MenuItem key={option.key} icon="add" text={option.text} label={option.label} onClick={option.onPick} />
          ))}
          {!props.loading && props.options.length === 0 && <MenuItem disabled text="No results" />}
        </Menu>
      )}
      {props.children}
    </FormGroup>
  );
}

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
  // A case past QC takes and gives up no images (the server refuses): no search (issue 29 item 13).
  const imagesLocked =
    existing && imageStatusOnAssign(existing.status, existing.onHoldFrom) === null
      ? CASE_MESSAGES.notAssignableStatus
      : null;
  const assignable = useAssignableImages(
    study.id,
    imageName,
    images.map((i) => i.id),
    imagesLocked === null,
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
              <FormGroup
                key={field}
                label={label}
                labelFor={id}
                intent={error ? 'danger' : 'none'}
                helperText={error}
                data-anchor={field}
              >
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
            <PickField
              id={`${idPrefix}-readers`}
              label="Readers"
              chipsLabel="Assigned readers"
              chips={readers.map((r) => ({ key: r.id, text: r.displayName }))}
              emptyText="No readers assigned"
              onRemove={(id) => setReaders((list) => list.filter((x) => x.id !== id))}
              search={readerSearch}
              onSearch={setReaderSearch}
              placeholder="Search readers"
              listLabel={readerName ? 'Matching readers' : 'Suggested readers'}
              listHeader={readerName ? undefined : 'Suggested readers'}
              loading={readersLoading}
              options={readerChoices.map((r) => ({
                key: r.id,
                text: r.displayName,
                label: `${r.numReadCases}/${r.numTotalCases} read`,
                onPick: () => setReaders((list) => [...list, r]),
              }))}
            >
              {existing && readersChanged && (
                <ReasonInput label="Readers" value={reasons.readers ?? ''} onChange={setReason('readers')} />
              )}
            </PickField>
          )}

          <PickField
            id={`${idPrefix}-images`}
            label="Images"
            chipsLabel="Images of the case"
            chips={images.map((i) => ({ key: i.id, text: i.name }))}
            emptyText="No images"
            onRemove={(id) => setImages((list) => list.filter((x) => x.id !== id))}
            search={imageSearch}
            onSearch={setImageSearch}
            placeholder="Search images waiting for a case"
            listLabel="Images waiting for a case"
            locked={imagesLocked}
            loading={assignable.isFetching}
            options={(assignable.data ?? []).map((i) => ({
              key: i.id,
              text: i.name,
              onPick: () => setImages((list) => [...list, i]),
            }))}
          >
            {existing && imagesChanged && (
              <ReasonInput label="Images" value={reasons.images ?? ''} onChange={setReason('images')} />
            )}
          </PickField>

          <DialogError error={mutation.isError ? errorMessage(mutation.error) : null} />
          {/* Why Save is disabled, with links to the fields (issue 20). */}
          <SaveBlockers
            groups={saveBlockerGroups(
              shown.filter((f) => errors[f]).map((f) => ({ key: f, label: CASE_FIELD_RULES[f].label, anchor: f })),
              needsReason
                .filter((key) => !(reasons[key] ?? '').trim())
                .map((key) => ({
                  key,
                  label:
                    key === 'readers'
                      ? 'Readers'
                      : key === 'images'
                        ? 'Images'
                        : CASE_FIELD_RULES[key as CaseField].label,
                  anchor: key === 'readers' || key === 'images' ? `${idPrefix}-${key}` : key,
                })),
            )}
            onGo={(item) => {
              if (item.key !== 'readers' && item.key !== 'images')
                setTouched((t) => new Set(t).add(item.key as CaseField));
            }}
          />
        </DialogBody>
        <FormDialogFooter
          submitText={existing ? 'Save' : 'Create case'}
          pending={mutation.isPending}
          disabled={!canSave}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}
