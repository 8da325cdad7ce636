import { useParams } from 'react-router';
import { NotFoundPage } from '../../app/NotFoundPage';
import { PlaceholderPage } from '../../components/PlaceholderPage';
import { RouteTabs, parseTab, type RouteTab } from '../../components/RouteTabs';

type ImageManagementTab = 'images' | 'cases' | 'annotations';
const TABS: readonly RouteTab<ImageManagementTab>[] = [
  { id: 'images', label: 'Images' },
  { id: 'cases', label: 'Cases' },
  { id: 'annotations', label: 'Annotations' },
];

const DESCRIPTIONS: Record<ImageManagementTab, string> = {
  images: 'Every image across your studies: upload, assign to a study and case, quality checks.',
  cases: 'Every case across your studies, with its status and images.',
  annotations: 'Annotations across your studies.',
};

/** /image-management/:tab? (images by default, cases, annotations). */
export function ImageManagementPage() {
  const tab = parseTab(useParams().tab, TABS, 'images');
  if (tab === null) return <NotFoundPage />;
  return (
    <PlaceholderPage title="Image Management" icon="media" description={DESCRIPTIONS[tab]}>
      <RouteTabs id="image-management-tabs" tabs={TABS} selected={tab} pathFor={(t) => `/image-management/${t}`} />
    </PlaceholderPage>
  );
}
