import { Button, Callout, ProgressBar, Section, SectionCard, type IconName } from '@blueprintjs/core';
import { REPORT_MESSAGES } from '@lamina/domain';
import { useId, useState } from 'react';
import { formatReceived, NO_FILTERS, type DownloadRequest, type ReportFilters } from './api';
import { dateErrors, ReportFilterFields } from './ReportFilterFields';
import { useReportDownload } from './useReportDownload';

export interface ReportButton {
  key: string;
  text: string;
  icon: IconName;
  request: (filters: ReportFilters) => DownloadRequest;
}

interface ReportCardProps {
  /** The section's id on the page (its heading's id is derived from it). */
  id: string;
  title: string;
  description: string;
  tz: string;
  /** A study is required unless the user may download the report Global (doc 1 §5). */
  studyOptional: boolean;
  celiacOnly?: boolean;
  /** The user filter, for system admins (doc 1 §2.9). */
  userFilter: boolean;
  buttons: readonly ReportButton[];
}

/**
 * One section of the Reports page (doc 1 §2.9): its own filters, its button(s), the progress of the
 * file while it streams, and its own red callout when a download fails.
 */
export function ReportCard(props: ReportCardProps) {
  const reasonId = useId();
  const [filters, setFilters] = useState<ReportFilters>(NO_FILTERS);
  const download = useReportDownload();
  const dates = dateErrors(filters, props.tz);
  const blocker =
    !props.studyOptional && filters.study === null ? REPORT_MESSAGES.studyRequired : (dates.start ?? dates.end);
  const runningButton = props.buttons.find((b) => b.key === download.running);

  return (
    <Section
      id={props.id}
      title={props.title}
      subtitle={props.description}
      compact
      className="lamina-report-section"
      aria-label={props.title}
      role="region"
    >
      <SectionCard>
        <div className="lamina-report-row">
          <ReportFilterFields
            filters={filters}
            onChange={setFilters}
            tz={props.tz}
            celiacOnly={props.celiacOnly ?? false}
            studyOptional={props.studyOptional}
            userFilter={props.userFilter}
          />
          <div className="lamina-report-buttons">
            {props.buttons.map((button) => (
              <Button
                key={button.key}
                intent="primary"
                icon={button.icon}
                text={button.text}
                disabled={blocker !== null || download.running !== null}
                loading={download.running === button.key}
                aria-describedby={blocker ? reasonId : undefined}
                onClick={() => download.start(button.key, button.request(filters))}
              />
            ))}
          </div>
        </div>
        {blocker && (
          // A date's reason is already under its field: here it is only for the button's description.
          <p
            id={reasonId}
            className={blocker === REPORT_MESSAGES.studyRequired ? 'lamina-report-reason' : 'lamina-visually-hidden'}
          >
            {blocker}
          </p>
        )}
        {runningButton && (
          <div className="lamina-report-progress">
            <ProgressBar intent="primary" aria-label={`${props.title}: downloading`} />
            <span role="status" aria-live="polite" data-testid="report-received">
              {`${runningButton.text}: ${formatReceived(download.bytes)} received`}
            </span>
            <Button variant="minimal" text="Cancel" onClick={download.cancel} />
          </div>
        )}
        {download.error && (
          <Callout intent="danger" role="alert" className="lamina-report-error">
            {download.error}
          </Callout>
        )}
      </SectionCard>
    </Section>
  );
}
