import { Button, H2, Spinner, Tab, Tabs, Tag } from '@blueprintjs/core';
import type { ImageView } from '@lamina/domain';
import { useState, type ReactNode } from 'react';
import { MacroLabelPanel } from './MacroLabelPanel';
import { isCalibrated } from './viewerGeometry';
import { readSidebarOpen, writeSidebarOpen } from './viewerPreferences';
import './viewer.css';

export type SidebarTab = 'overview' | 'annotations' | 'queries';

/** The sidebar's panels; a null panel is a tab the user may not see (doc 3 §2, §6). */
export interface SidebarPanels {
  overview: ReactNode | null;
  annotations: ReactNode | null;
  queries: ReactNode | null;
  /** A query needs the user's attention: a red dot on the Queries tab. */
  queriesAttention?: boolean;
}

interface ViewerFrameProps {
  /** The heading: the image's name, or the case. */
  title: string;
  /** Beside the title (the case status). */
  badge?: ReactNode;
  /** Top-bar buttons (the case actions). */
  actions?: ReactNode;
  /** The image shown, once loaded: its pixel size and its label/macro. */
  image: ImageView | undefined;
  /** Close; null leaves blank space instead (an embedded central reader, doc 3 §2). */
  onClose: (() => void) | null;
  /** Null when the user may see no sidebar at all. */
  sidebar: SidebarPanels | null;
  /** The tab open first (the Queries tab when a query is named in the URL). */
  initialTab?: SidebarTab;
  /**
   * False until the slide's first frame is drawn: the panels (and what they load) wait, a
   * spinner in their place (issue 28). Default true.
   */
  sidebarReady?: boolean;
  children: ReactNode;
}

const TAB_TITLES: Record<SidebarTab, string> = { overview: 'Overview', annotations: 'Annotations', queries: 'Queries' };

/**
 * The frame of both viewers (doc 3 §2 "Image viewer layout"): a top bar (title, pixel size, the
 * page's actions, the image label, the Sidebar toggle, close) over the full-height map and the
 * collapsible 34rem sidebar with its Overview, Annotations and Queries tabs.
 */
export function ViewerFrame(props: ViewerFrameProps) {
  const { image, sidebar } = props;
  const [sidebarOpen, setSidebarOpen] = useState(readSidebarOpen);
  const [labelsOpen, setLabelsOpen] = useState(false);
  const tabs = sidebar ? (Object.keys(TAB_TITLES) as SidebarTab[]).filter((tab) => sidebar[tab] !== null) : [];
  const [tab, setTab] = useState<SidebarTab | undefined>(props.initialTab);
  const shownTab = tab && tabs.includes(tab) ? tab : tabs[0];
  const toggleSidebar = () => {
    writeSidebarOpen(!sidebarOpen);
    setSidebarOpen(!sidebarOpen);
  };
  const labelImages = image && (image.hasLabel || image.hasMacro);

  return (
    <div className="lamina-viewer">
      <div className="lamina-viewer-topbar">
        <H2 className="lamina-viewer-title" title={props.title}>
          {props.title}
        </H2>
        {props.badge}
        {image && image.processingStatus === 'SUCCESS' && (
          <span className="lamina-viewer-pixel-size" data-testid="pixel-size">
            {isCalibrated(image.physicalResolution) ? (
              `${image.physicalResolution} µm/px`
            ) : (
              <Tag
                minimal
                intent="warning"
                htmlTitle="This slide records no pixel size: lengths assume 0.2 µm per pixel and are estimates"
              >
                Uncalibrated: no pixel size
              </Tag>
            )}
          </span>
        )}
        <div className="lamina-viewer-actions">{props.actions}</div>
        {labelImages && (
          // The image label (ViewLabel permission: the server says so with hasLabel/hasMacro).
          <Button
            variant={labelsOpen ? 'solid' : 'minimal'}
            className="lamina-viewer-label-button"
            aria-pressed={labelsOpen}
            aria-label="Label and macro images"
            title="Label and macro images"
            onClick={() => setLabelsOpen(!labelsOpen)}
          >
            {image.hasLabel ? (
              <img src={`/api/images/${image.id}/label`} alt="" className="lamina-viewer-label-thumb" />
            ) : (
              'Macro'
            )}
          </Button>
        )}
        {tabs.length > 0 && (
          <Button
            variant={sidebarOpen ? 'solid' : 'minimal'}
            icon="list-detail-view"
            text="Sidebar"
            aria-pressed={sidebarOpen}
            onClick={toggleSidebar}
          />
        )}
        {props.onClose ? (
          <Button variant="minimal" icon="cross" aria-label="Close" title="Close" onClick={props.onClose} />
        ) : (
          <span className="lamina-viewer-close-space" aria-hidden="true" />
        )}
      </div>
      <div className="lamina-viewer-main">
        <div className="lamina-viewer-body">
          {props.children}
          {labelsOpen && image && <MacroLabelPanel image={image} onClose={() => setLabelsOpen(false)} />}
        </div>
        {sidebar && shownTab && sidebarOpen && props.sidebarReady === false && (
          // Until the slide's first frame, the sidebar's box only (issue 28): its tabs' first
          // mount measures the page (Blueprint's tab indicator), work the first frame need not wait on.
          <aside className="lamina-viewer-sidebar" aria-label="Sidebar" aria-busy="true">
            <div className="lamina-viewer-sidebar-panel">
              <Spinner size={20} aria-label="Loading the sidebar" />
            </div>
          </aside>
        )}
        {sidebar && shownTab && sidebarOpen && props.sidebarReady !== false && (
          <aside className="lamina-viewer-sidebar" aria-label="Sidebar">
            <Tabs
              id="viewer-sidebar"
              selectedTabId={shownTab}
              onChange={(id) => setTab(id as SidebarTab)}
              renderActiveTabPanelOnly
            >
              {tabs.map((id) => (
                <Tab
                  key={id}
                  id={id}
                  title={
                    <>
                      {TAB_TITLES[id]}
                      {id === 'queries' && sidebar.queriesAttention && (
                        <span className="lamina-attention-dot" aria-label="needs attention" />
                      )}
                    </>
                  }
                  panel={<div className="lamina-viewer-sidebar-panel">{sidebar[id]}</div>}
                />
              ))}
            </Tabs>
          </aside>
        )}
      </div>
    </div>
  );
}
