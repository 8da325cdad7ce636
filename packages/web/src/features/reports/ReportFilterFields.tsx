import { isCeliacStudy, parseReportDate, REPORT_MESSAGES, reportRange } from '@lamina/domain';
import { useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useStudyList } from '../../api/studies';
import { useUserList } from '../../api/users';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import type { Choice, ReportFilters } from './api';
import { ChoiceTypeahead } from './ChoiceTypeahead';
import { ReportDateField } from './ReportDateField';

/** How many studies or users a type-ahead offers; more ask for a narrower search. */
export const FILTER_CHOICES = 100;

const narrowHint = (total: number | undefined) =>
  (total ?? 0) > FILTER_CHOICES ? `Showing the first ${FILTER_CHOICES}; type to narrow.` : undefined;

interface StudyFilterProps {
  value: Choice | null;
  onChange: (study: Choice | null) => void;
  /** The celiac report lists only celiac studies (doc 1 §5). */
  celiacOnly: boolean;
  /** A system admin may leave it empty for the Global report. */
  optional: boolean;
}

/** The study type-ahead: the studies the user may see (GET /api/studies/list), searched by name. */
function StudyFilter({ value, onChange, celiacOnly, optional }: StudyFilterProps) {
  const [text, setText] = useState(value?.name ?? '');
  const name = useDebouncedValue(value && text === value.name ? '' : text.trim());
  const studies = useStudyList({ name, pageIndex: 0, pageSize: FILTER_CHOICES, sort: 'name' });
  const rows = studies.data?.studies.filter((s) => !celiacOnly || isCeliacStudy(s.indications));
  return (
    <ChoiceTypeahead
      label={celiacOnly ? 'Celiac study' : 'Study'}
      placeholder={optional ? 'All studies (Global)' : 'Search studies'}
      text={text}
      onTextChange={setText}
      items={rows ? rows.map((s) => ({ id: s.id, name: s.name })) : studies.isError ? [] : null}
      error={studies.isError ? errorMessage(studies.error) : null}
      hint={narrowHint(studies.data?.total)}
      selected={value}
      onSelect={onChange}
      noMatches={celiacOnly ? 'No celiac study matches' : 'No study matches'}
      className="lamina-report-study"
    />
  );
}

/** The user type-ahead (system admins only, doc 1 §2.9): GET /api/users, searched by name. */
function UserFilter({ value, onChange }: { value: Choice | null; onChange: (user: Choice | null) => void }) {
  const [text, setText] = useState(value?.name ?? '');
  const name = useDebouncedValue(value && text === value.name ? '' : text.trim());
  const users = useUserList({ name, pageIndex: 0, pageSize: FILTER_CHOICES, sort: 'username' });
  const rows = users.data?.users;
  return (
    <ChoiceTypeahead
      label="User"
      placeholder="All users"
      text={text}
      onTextChange={setText}
      items={
        rows
          ? rows.map((u) => ({ id: u.id, name: `${u.firstName} ${u.lastName} (${u.username})`.trim() }))
          : users.isError
            ? []
            : null
      }
      error={users.isError ? errorMessage(users.error) : null}
      hint={narrowHint(users.data?.total)}
      selected={value}
      onSelect={onChange}
      noMatches="No user matches"
    />
  );
}

/** Why each date cannot be used (doc 1 §5: DD-MMM-YYYY; the end not before the start), or null. */
export function dateErrors(filters: ReportFilters, tz: string): { start: string | null; end: string | null } {
  const start = filters.startDate.trim();
  const end = filters.endDate.trim();
  const errors: { start: string | null; end: string | null } = {
    start: start !== '' && !parseReportDate(start) ? REPORT_MESSAGES.invalidDate : null,
    end: end !== '' && !parseReportDate(end) ? REPORT_MESSAGES.invalidDate : null,
  };
  if (!errors.start && !errors.end) {
    const range = reportRange(start || undefined, end || undefined, tz);
    if ('error' in range) errors.end = range.error;
  }
  return errors;
}

interface ReportFilterFieldsProps {
  filters: ReportFilters;
  onChange: (filters: ReportFilters) => void;
  tz: string;
  celiacOnly: boolean;
  studyOptional: boolean;
  userFilter: boolean;
}

/** One section's filters (doc 1 §2.9): study, user (system admins), start and end date. */
export function ReportFilterFields({ filters, onChange, tz, ...options }: ReportFilterFieldsProps) {
  const errors = dateErrors(filters, tz);
  const set = (patch: Partial<ReportFilters>) => onChange({ ...filters, ...patch });
  return (
    <>
      <StudyFilter
        value={filters.study}
        onChange={(study) => set({ study })}
        celiacOnly={options.celiacOnly}
        optional={options.studyOptional}
      />
      {options.userFilter && <UserFilter value={filters.user} onChange={(user) => set({ user })} />}
      <ReportDateField
        label="Start date"
        value={filters.startDate}
        onChange={(startDate) => set({ startDate })}
        error={errors.start}
      />
      <ReportDateField
        label="End date"
        value={filters.endDate}
        onChange={(endDate) => set({ endDate })}
        error={errors.end}
      />
    </>
  );
}
