import { HPF_CURSOR_HOLD_MS } from '@lamina/domain';
import { describe, expect, it } from 'vitest';
import { DrawingMachine, type CompletedShape } from './drawingMachine';

const TOL = 2;

function machine(tool: Parameters<DrawingMachine['setTool']>[0]) {
  const m = new DrawingMachine();
  const completed: CompletedShape[] = [];
  m.on('complete', (shape) => completed.push(shape));
  m.setTool(tool);
  return { m, completed };
}

describe('drawing states (doc 3 §4)', () => {
  it('line: press, drag, release saves a two-point LineString; a click then a click also does', () => {
    const { m, completed } = machine('line');
    expect(m.snapshot.state).toBe('DROPPING');
    expect(m.press([10, 10], 0)).toBe('capture');
    expect(m.snapshot.state).toBe('PLACING');
    m.drag([50, 10], 10, TOL);
    m.release([50, 10], TOL);
    expect(completed[0]?.geometry).toEqual({
      type: 'LineString',
      coordinates: [
        [10, 10],
        [50, 10],
      ],
    });
    expect(m.snapshot.state).toBe('DROPPING');
    m.press([0, 0], 100);
    m.release([0, 0], TOL);
    expect(m.snapshot.state).toBe('PLACING');
    m.hover([5, 5]);
    expect(m.snapshot.draft.pointer).toEqual([5, 5]);
    m.press([30, 40], 200);
    m.release([30, 40], TOL);
    expect(completed[1]?.geometry).toEqual({
      type: 'LineString',
      coordinates: [
        [0, 0],
        [30, 40],
      ],
    });
  });

  it('multiline: clicks add vertices (a repeated click is one), a double click ends it; one vertex is no line', () => {
    const { m, completed } = machine('multiline');
    expect(m.press([0, 0], 0)).toBe('pass');
    m.click([0, 0], TOL);
    m.click([10, 0], TOL);
    m.click([10, 1], TOL);
    m.click([10, 20], TOL);
    expect(m.snapshot.state).toBe('PLACING');
    expect(m.doubleClick(TOL)).toBe(true);
    expect(completed[0]?.geometry).toEqual({
      type: 'LineString',
      coordinates: [
        [0, 0],
        [10, 0],
        [10, 20],
      ],
    });
    m.click([5, 5], TOL);
    m.finish(TOL);
    expect(completed).toHaveLength(1);
    expect(m.snapshot.state).toBe('PLACING');
  });

  it('freehand: the trace closes into a polygon on release; a trace of under three points is dropped', () => {
    const { m, completed } = machine('freehand');
    m.press([0, 0], 0);
    m.drag([10, 0], 1, TOL);
    m.drag([10.5, 0], 2, TOL);
    m.drag([10, 10], 3, TOL);
    m.release([10, 10], TOL);
    expect(completed[0]?.geometry).toEqual({
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [10, 0],
          [10, 10],
          [0, 0],
        ],
      ],
    });
    m.press([0, 0], 10);
    m.drag([10, 0], 11, TOL);
    m.release([10, 0], TOL);
    expect(completed).toHaveLength(1);
    expect(m.snapshot.state).toBe('DROPPING');
  });

  it('ellipse: press at the centre, drag to the radii, release opens EDITING; along one axis it is a circle', () => {
    const { m } = machine('ellipse');
    m.press([100, 100], 0);
    m.drag([130, 80], 5, TOL);
    m.release([130, 80], TOL);
    expect(m.snapshot.state).toBe('EDITING');
    m.setRotation(30);
    expect(m.placedShape()).toEqual({
      tool: 'ellipse',
      geometry: { type: 'Point', coordinates: [100, 100] },
      radiusX: 30,
      radiusY: 20,
      rotation: 30,
    });
    m.cancel();
    m.press([100, 100], 10);
    m.drag([140, 100], 11, TOL);
    m.release([140, 100], TOL);
    expect(m.placedShape()).toMatchObject({ radiusX: 40, radiusY: 40 });
  });

  it(`HPF: a click places it; held ${HPF_CURSOR_HOLD_MS} ms a drag moves it; a quicker drag pans`, () => {
    const { m } = machine('hpf');
    m.hover([5, 5]);
    expect(m.snapshot.draft.pointer).toEqual([5, 5]);
    expect(m.press([10, 10], 1000)).toBe('capture');
    expect(m.drag([40, 10], 1050, TOL)).toBe('pan');
    expect(m.drag([60, 10], 1300, TOL)).toBe('pan');
    m.release([60, 10], TOL);
    expect(m.snapshot.state).toBe('DROPPING');
    m.press([10, 10], 2000);
    expect(m.drag([40, 10], 2000 + HPF_CURSOR_HOLD_MS, TOL)).toBe('draw');
    expect(m.snapshot.state).toBe('PLACING');
    m.release([45, 12], TOL);
    expect(m.snapshot.state).toBe('EDITING');
    expect(m.placedShape()?.geometry).toEqual({ type: 'Point', coordinates: [45, 12] });
    m.cancel();
    m.press([7, 8], 3000);
    m.release([7, 8], TOL);
    expect(m.placedShape()?.geometry).toEqual({ type: 'Point', coordinates: [7, 8] });
  });

  it('point saves on a click; text places its marker for the panel', () => {
    const p = machine('point');
    p.m.click([3, 4], TOL);
    expect(p.completed[0]).toEqual({ tool: 'point', geometry: { type: 'Point', coordinates: [3, 4] } });
    const t = machine('text');
    t.m.click([3, 4], TOL);
    expect(t.m.snapshot.state).toBe('EDITING');
    expect(t.m.placedShape()?.geometry).toEqual({ type: 'Point', coordinates: [3, 4] });
  });

  it('after a save the tool stays for line, multiline, point, HPF, freehand and resets for ellipse and text', () => {
    for (const tool of ['line', 'multiline', 'point', 'hpf', 'freehand'] as const) {
      const { m } = machine(tool);
      m.afterCreate(tool);
      expect(m.snapshot.tool, tool).toBe(tool);
      expect(m.snapshot.state).toBe('DROPPING');
    }
    for (const tool of ['ellipse', 'text'] as const) {
      const { m } = machine(tool);
      m.afterCreate(tool);
      expect(m.snapshot.tool, tool).toBeNull();
      expect(m.snapshot.state).toBeNull();
    }
  });

  it('Escape drops the shape being drawn first, then closes the tool', () => {
    const { m } = machine('multiline');
    m.click([0, 0], TOL);
    m.cancel();
    expect(m.snapshot).toMatchObject({ tool: 'multiline', state: 'DROPPING' });
    expect(m.snapshot.draft.coords).toEqual([]);
    m.cancel();
    expect(m.snapshot).toMatchObject({ tool: null, state: null });
  });
});
