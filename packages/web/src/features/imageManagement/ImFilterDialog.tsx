import {
  Button,
  Checkbox,
  Dialog,
  DialogBody,
  DialogFooter,
  InputGroup,
  Menu,
  MenuItem,
  Radio,
  RadioGroup,
  Spinner,
  Tag,
} from '@blueprintjs/core';
import { IM_DATE_FILTER_LABELS, IM_DATE_FILTERS, type ImDateFilter, type ImFilters } from '@lamina/domain';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { apiFetch } from '../../api/client';
import { useDebouncedValue } from '../../components/useDebouncedValue';

type Step = 'menu' | 'study' | 'date' | 'status';

interface ImFilterDialogProps {
  filters: ImFilters;
  onChange: (filters: ImFilters) => void;
  /** The tab's statuses and their labels (image or case statuses). */
  statuses: readonly { value: string; label: string }[];
  statusKey: 'imageStatusFilter' | 'caseStatusFilter';
  statusTitle: string;
  onClose: () => void;
}

/** Studies whose name contains the text, for the Study Name filter's type-ahead. */
function useStudySearch(name: string, enabled: boolean) {
  return useQuery({
    queryKey: ['imageManagement', 'study-search', name],
    enabled,
    queryFn: ({ signal }) =>
      apiFetch<{ studies: { id: number; name: string }[] }>(
        `/api/studies/list?pageSize=20&page=1&name=${encodeURIComponent(name)}`,
        { signal },
      ),
  });
}

/**
 * Add Filter (doc 2 §2.1): a menu of the filters, each opening its own step (Study Name with a
 * type-ahead of studies, Upload Date quick ranges with a clear action, Status), and back. Every
 * choice applies at once.
 */
export function ImFilterDialog(props: ImFilterDialogProps) {
  const { filters, onChange, statuses, statusKey } = props;
  const [step, setStep] = useState<Step>('menu');
  const [studyText, setStudyText] = useState('');
  const name = useDebouncedValue(studyText.trim());
  const found = useStudySearch(name, step === 'study');
  const selected = filters.studyFilter?.selected ?? [];
  const chosenStatuses = (filters[statusKey] ?? []) as string[];

  const setStudies = (next: { id: number; name: string }[]) =>
    onChange({
      ...filters,
      studyFilter: next.length > 0 ? { selectedIds: next.map((s) => s.id), selected: next } : undefined,
    });
  const setDate = (value: ImDateFilter | null) => onChange({ ...filters, dateFilter: value });
  const toggleStatus = (value: string) => {
    const next = chosenStatuses.includes(value)
      ? chosenStatuses.filter((s) => s !== value)
      : [...chosenStatuses, value];
    onChange({ ...filters, [statusKey]: next.length > 0 ? next : undefined });
  };

  const title =
    step === 'menu'
      ? 'Add Filter'
      : step === 'study'
        ? 'Study Name'
        : step === 'date'
          ? 'Upload Date'
          : props.statusTitle;

  return (
    <Dialog isOpen onClose={props.onClose} title={title} style={{ width: 420 }}>
      <DialogBody>
        {step === 'menu' && (
          <Menu aria-label="Filters">
            <MenuItem
              icon="projects"
              text="Study Name"
              label={selected.length > 0 ? String(selected.length) : undefined}
              onClick={() => setStep('study')}
            />
            <MenuItem
              icon="calendar"
              text="Upload Date"
              label={filters.dateFilter ? IM_DATE_FILTER_LABELS[filters.dateFilter] : undefined}
              onClick={() => setStep('date')}
            />
            <MenuItem
              icon="tag"
              text={props.statusTitle}
              label={chosenStatuses.length > 0 ? String(chosenStatuses.length) : undefined}
              onClick={() => setStep('status')}
            />
          </Menu>
        )}
        {step === 'study' && (
          <>
            <InputGroup
              autoFocus
              leftIcon="search"
              placeholder="Enter study name"
              aria-label="Study name"
              value={studyText}
              onValueChange={setStudyText}
            />
            <div className="lamina-im-tags">
              {selected.map((study) => (
                <Tag key={study.id} onRemove={() => setStudies(selected.filter((s) => s.id !== study.id))}>
                  {study.name}
                </Tag>
              ))}
            </div>
            {found.isPending ? (
              <Spinner size={20} aria-label="Loading ..." />
            ) : (found.data?.studies.length ?? 0) === 0 ? (
              <p className="bp6-text-muted">No results</p>
            ) : (
              <div className="lamina-im-choices" role="group" aria-label="Studies">
                {found.data?.studies.map((study) => (
                  <Checkbox
                    key={study.id}
                    label={study.name}
                    checked={selected.some((s) => s.id === study.id)}
                    onChange={() =>
                      setStudies(
                        selected.some((s) => s.id === study.id)
                          ? selected.filter((s) => s.id !== study.id)
                          : [...selected, { id: study.id, name: study.name }],
                      )
                    }
                  />
                ))}
              </div>
            )}
          </>
        )}
        {step === 'date' && (
          <RadioGroup
            label="Uploaded"
            selectedValue={filters.dateFilter ?? ''}
            onChange={(event) => setDate(event.currentTarget.value as ImDateFilter)}
          >
            {IM_DATE_FILTERS.map((value) => (
              <Radio key={value} value={value} label={IM_DATE_FILTER_LABELS[value]} />
            ))}
          </RadioGroup>
        )}
        {step === 'status' && (
          <div className="lamina-im-choices" role="group" aria-label={props.statusTitle}>
            {statuses.map((status) => (
              <Checkbox
                key={status.value}
                label={status.label}
                checked={chosenStatuses.includes(status.value)}
                onChange={() => toggleStatus(status.value)}
              />
            ))}
          </div>
        )}
      </DialogBody>
      <DialogFooter
        actions={
          <>
            {step === 'date' && filters.dateFilter && (
              <Button variant="minimal" text="Clear" onClick={() => setDate(null)} />
            )}
            {step !== 'menu' && <Button icon="arrow-left" text="Back" onClick={() => setStep('menu')} />}
            <Button intent="primary" text="Done" onClick={props.onClose} />
          </>
        }
      />
    </Dialog>
  );
}
