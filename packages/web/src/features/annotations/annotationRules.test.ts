import { describe, expect, it } from 'vitest';
import { makeClass, makeStudy } from '../../test/fixtures';
import {
  annotationPermissions,
  classCounts,
  classesOfTool,
  studyClasses,
  toolDisabledReason,
  toolError,
  toolKeyAction,
} from './annotationRules';
import { makeAnnotation } from './testData';

const READER = [
  'AP_ImageViewer_ViewAnnotationsToolbar',
  'AP_ImageViewer_EditCreateAnnotations',
  'AP_ImageViewer_DeleteAnnotations',
  'AP_ImageCaseViewer_ViewAnnotationstab',
];
const ISC = ['AP_ImageViewer_ViewAnnotationsToolbar', 'AP_ImageCaseViewer_ViewAnnotationstab'];

const context = (actions: string[], extra: Partial<Parameters<typeof toolKeyAction>[1]> = {}) => ({
  permissions: annotationPermissions(actions),
  multilineAvailable: true,
  locked: false,
  annotationsVisible: true,
  toolbarShown: true,
  ...extra,
});

describe('annotation permissions (doc 3 §6)', () => {
  it('a reader draws and deletes; ISC sees the toolbar and tab only; delete needs create too', () => {
    expect(annotationPermissions(READER)).toEqual({ toolbar: true, create: true, delete: true, tab: true });
    expect(annotationPermissions(ISC)).toEqual({ toolbar: true, create: false, delete: false, tab: true });
    expect(annotationPermissions(['AP_ImageViewer_DeleteAnnotations']).delete).toBe(false);
  });
});

describe('tool keys r l t o h p f, Escape (doc 3 §2)', () => {
  it('choose their tools', () => {
    const keys = ['r', 'l', 't', 'o', 'h', 'p', 'f'].map((k) => toolKeyAction(k, context(READER)));
    expect(keys).toEqual(
      ['line', 'multiline', 'text', 'ellipse', 'hpf', 'point', 'freehand'].map((tool) => ({ kind: 'tool', tool })),
    );
    expect(toolKeyAction('Escape', context(READER))).toEqual({ kind: 'escape' });
    expect(toolKeyAction('x', context(READER))).toBeNull();
  });

  it('do nothing while annotations are hidden; h p f need the permission to create', () => {
    expect(toolKeyAction('h', context(READER, { annotationsVisible: false }))).toBeNull();
    expect(toolKeyAction('r', context(READER, { annotationsVisible: false }))).toBeNull();
    for (const k of ['h', 'p', 'f']) expect(toolKeyAction(k, context(ISC))).toBeNull();
  });

  it('l does nothing outside a celiac study with line classes, nor any tool on a locked read', () => {
    expect(toolKeyAction('l', context(READER, { multilineAvailable: false }))).toBeNull();
    expect(toolKeyAction('p', context(READER, { locked: true }))).toBeNull();
    expect(toolDisabledReason('point', context(READER, { locked: true }))).toMatch(/scored/);
  });

  it("an unknown tool is 'Unexpected: {tool}'", () => {
    expect(toolError('lasso')).toBe('Unexpected: lasso');
    expect(toolError('hpf')).toBeNull();
  });
});

describe('class flyouts', () => {
  it('list the enabled, not deleted classes of the tool in the study order, with counts of this image', () => {
    const study = makeStudy({
      pointClasses: [
        makeClass({ id: 3, name: 'IEL', sortOrder: 1 }),
        makeClass({ id: 4, name: 'Enterocyte', sortOrder: 0 }),
        makeClass({ id: 5, name: 'Old', sortOrder: 2, enabled: false }),
        makeClass({ id: 6, name: 'Gone', sortOrder: 3, deleted: true }),
      ],
    });
    const classes = studyClasses(study);
    expect(classes.point.map((c) => c.name)).toEqual(['Enterocyte', 'IEL', 'Old']);
    expect(classesOfTool('point', classes).map((c) => c.name)).toEqual(['Enterocyte', 'IEL']);
    expect(classesOfTool('hpf', classes)).toEqual([]);
    const counts = classCounts(
      [
        makeAnnotation({ annotationClassId: 3 }),
        makeAnnotation({ annotationClassId: 3 }),
        makeAnnotation({ annotationClassId: 4 }),
        makeAnnotation({ annotationType: 'HPF', annotationClassId: 3 }),
      ],
      'point',
    );
    expect([...counts]).toEqual([
      [3, 2],
      [4, 1],
    ]);
  });
});
