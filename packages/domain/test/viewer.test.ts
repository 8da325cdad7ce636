import { describe, expect, it } from 'vitest';
import { ROLE_PERMISSIONS, viewerTabs } from '../src/index.js';

describe('viewer sidebar tabs (doc 3 §2 Sidebar)', () => {
  it('the tabs follow their permissions, Overview first', () => {
    expect(viewerTabs(['AP_ImageCaseViewer_ViewOverviewtab'], false)).toEqual(['overview']);
    expect(
      viewerTabs(
        ['AP_CaseViewer_ViewQueries', 'AP_ImageCaseViewer_ViewAnnotationstab', 'AP_ImageCaseViewer_ViewOverviewtab'],
        false,
      ),
    ).toEqual(['overview', 'annotations', 'queries']);
  });

  it('without the overview permission only the uploader has a sidebar', () => {
    expect(viewerTabs(['AP_CaseViewer_ViewQueries'], false)).toEqual([]);
    expect(viewerTabs(['AP_CaseViewer_ViewQueries'], true)).toEqual(['overview', 'queries']);
    expect(viewerTabs(new Set<string>(), true)).toEqual(['overview']);
  });

  it('a central reader sees Overview and Annotations', () => {
    expect(viewerTabs([...ROLE_PERMISSIONS.CR], false)).toEqual(expect.arrayContaining(['overview', 'annotations']));
  });
});
