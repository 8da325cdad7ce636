import { CaseDetailsPage } from '../cases/CaseDetailsPage';

/**
 * /studies/:studyId/cases/:id — the case's details, images and actions (issue 11); the viewer issue
 * turns it into the case viewer (images side by side, QC and scoring).
 */
export function CaseViewerPage() {
  return <CaseDetailsPage />;
}
