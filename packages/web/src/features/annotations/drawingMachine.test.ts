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

  it('multiline: clicks add vertices, a double click ends it at its point; one vertex is no line', () => {
    const { m, completed } = machine('multiline');
    expect(m.press([0, 0], 0)).toBe('pass');
    m.click([0, 0], TOL);
    m.click([10, 0], TOL);
    m.click([10, 20], TOL);
    expect(m.snapshot.state).toBe('PLACING');
    // The double click's second click, 3 px off the first (beyond the click tolerance): no vertex.
    expect(m.doubleClick([12, 22], TOL)).toBe(true);
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

  it('multiline: a click on the last vertex ends the line (a slow double click), never a duplicate vertex', () => {
    const { m, completed } = machine('multiline');
    m.click([0, 0], TOL);
    m.click([0, 0], TOL); // one vertex: nothing to end, nothing added
    expect(m.snapshot.draft.coords).toEqual([[0, 0]]);
    m.click([30, 40], TOL);
    m.click([31, 40], TOL);
    expect(completed.map((c) => c.geometry.coordinates)).toEqual([
      [
        [0, 0],
        [30, 40],
      ],
    ]);
    expect(m.snapshot).toMatchObject({ tool: 'multiline', state: 'DROPPING' });
    // Enter ends one too.
    m.click([50, 50], TOL);
    m.click([60, 50], TOL);
    m.finish(TOL);
    expect(completed).toHaveLength(2);
  });

  it('a save answered while the next line is being drawn leaves that line alone', () => {
    const { m, completed } = machine('multiline');
    m.click([0, 0], TOL);
    m.click([10, 0], TOL);
    m.finish(TOL);
    m.click([20, 20], TOL);
    m.afterCreate('multiline');
    m.click([40, 20], TOL);
    m.finish(TOL);
    expect(completed[1]?.geometry.coordinates).toEqual([
      [20, 20],
      [40, 20],
    ]);
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
      if (tool === 'hpf') {
        m.press([5, 5], 0);
        m.release([5, 5], TOL);
        expect(m.snapshot.state).toBe('EDITING');
      }
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

describe('a vertex outside the slide is refused, never clamped (issue 29, item 2)', () => {
  const bounded = (tool: Parameters<DrawingMachine['setTool']>[0]) => {
    const made = machine(tool);
    made.m.setBounds(100, 50);
    return made;
  };

  it('multiline, point, text: a click outside adds nothing and shows the cue; the next inside clears it', () => {
    for (const tool of ['multiline', 'point', 'text'] as const) {
      const { m, completed } = bounded(tool);
      for (const p of [
        [-1, 10],
        [10, -0.5],
        [100.5, 10],
        [10, 51],
      ] as const) {
        expect(m.click([p[0], p[1]], TOL), tool).toBe(true);
        expect(m.snapshot.outside, tool).toEqual(p);
        expect(m.snapshot.draft.coords, tool).toEqual([]);
      }
      expect(completed, tool).toEqual([]);
      m.hover([50, 25]);
      expect(m.snapshot.outside).toBeNull();
    }
    // The edge itself is on the slide.
    const { m, completed } = bounded('multiline');
    m.click([0, 0], TOL);
    m.click([120, 50], TOL); // refused
    m.click([100, 50], TOL);
    m.finish(TOL);
    expect(completed[0]?.geometry.coordinates).toEqual([
      [0, 0],
      [100, 50],
    ]);
  });

  it('multiline: the second click of a double click outside does not end the line', () => {
    const { m, completed } = bounded('multiline');
    m.click([10, 10], TOL);
    m.click([90, 10], TOL);
    m.click([101, 10], TOL);
    m.doubleClick([102, 10], TOL);
    expect(completed).toEqual([]);
    expect(m.snapshot.draft.coords).toEqual([
      [10, 10],
      [90, 10],
    ]);
  });

  it('line: dragged to outside the slide, no line is saved (it was 165 µm instead of 200 µm)', () => {
    const { m, completed } = bounded('line');
    m.press([80, 10], 0);
    m.drag([130, 10], 10, TOL);
    expect(m.snapshot.outside).toEqual([130, 10]);
    m.release([130, 10], TOL);
    expect(completed).toEqual([]);
    expect(m.snapshot).toMatchObject({ state: 'DROPPING', outside: [130, 10] });
    // A press outside starts nothing.
    expect(m.press([-5, 10], 20)).toBe('pass');
    expect(m.snapshot.state).toBe('DROPPING');
    // Click, then a click outside: the first end stays for a click inside.
    m.press([10, 10], 30);
    m.release([10, 10], TOL);
    expect(m.press([10, 60], 40)).toBe('pass');
    expect(m.snapshot.draft.coords).toEqual([[10, 10]]);
    m.press([20, 10], 50);
    m.release([20, 10], TOL);
    expect(completed[0]?.geometry.coordinates).toEqual([
      [10, 10],
      [20, 10],
    ]);
  });

  it('freehand: a trace that leaves the slide is refused whole (no half-oval)', () => {
    const { m, completed } = bounded('freehand');
    m.press([90, 10], 0);
    m.drag([95, 20], 10, TOL);
    m.drag([105, 25], 20, TOL);
    m.drag([95, 40], 30, TOL);
    m.drag([85, 25], 40, TOL);
    m.release([85, 25], TOL);
    expect(completed).toEqual([]);
    expect(m.snapshot.state).toBe('DROPPING');
    expect(m.snapshot.outside).toEqual([105, 25]); // where it left the slide
    // Inside the slide a trace saves.
    m.press([10, 10], 50);
    m.drag([20, 10], 60, TOL);
    m.drag([20, 20], 70, TOL);
    m.release([20, 20], TOL);
    expect(completed).toHaveLength(1);
  });

  it('ellipse and HPF: a centre outside is refused', () => {
    const e = bounded('ellipse');
    expect(e.m.press([-3, 10], 0)).toBe('pass');
    e.m.drag([20, 20], 10, TOL);
    e.m.release([20, 20], TOL);
    expect(e.m.snapshot.state).toBe('DROPPING');
    expect(e.m.placedShape()).toBeNull();
    const h = bounded('hpf');
    expect(h.m.press([10, 55], 0)).toBe('pass');
    h.m.release([10, 55], TOL);
    expect(h.m.snapshot.state).toBe('DROPPING');
    // Held and dragged off the slide: refused on release.
    expect(h.m.press([10, 40], 0)).toBe('capture');
    h.m.drag([10, 45], HPF_CURSOR_HOLD_MS + 10, TOL);
    h.m.drag([10, 70], HPF_CURSOR_HOLD_MS + 20, TOL);
    h.m.release([10, 70], TOL);
    expect(h.m.snapshot.state).toBe('DROPPING');
    expect(h.m.snapshot.outside).toEqual([10, 70]);
  });
});
