import {
  Button,
  ButtonGroup,
  Callout,
  Divider,
  Menu,
  MenuItem,
  PopoverNext,
  TextArea,
  type IconName,
} from '@blueprintjs/core';
import {
  ANNOTATION_MESSAGES,
  ANNOTATION_TOOLS,
  ELLIPSE_DEBOUNCE_MS,
  MULTILINE_CATEGORY_LABELS,
  PANEL_TOOLS,
  TOOL_KEYS,
  TOOL_LABELS,
  canAddAnnotation,
  formatAreaUm2,
  formatMicrons,
  physicalMicronsPerPixel,
  regionMeasures,
  type AnnotationTool,
} from '@lamina/domain';
import { useMemo, useState } from 'react';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { classCounts, classesOfTool, isClassTool, toolDisabledReason } from './annotationRules';
import { historyLabel, REDO_KEYS, UNDO_KEYS } from './useAnnotationHistory';
import type { AnnotationTools, ClassTool } from './useAnnotationTools';

const TOOL_ICONS: Record<AnnotationTool, IconName> = {
  line: 'slash',
  multiline: 'timeline-line-chart',
  text: 'font',
  ellipse: 'circle',
  hpf: 'target',
  point: 'dot',
  freehand: 'draw',
};

const DRAWING_HINTS: Partial<Record<AnnotationTool, string>> = {
  line: 'Drag, or click both ends',
  multiline: 'Click each point; double-click or Enter ends the line',
  text: 'Click where the text goes',
  ellipse: 'Press at the centre, hold and drag',
  hpf: 'Click to place; hold and drag to move it',
  point: 'Click each point',
  freehand: 'Press and trace the region',
};

/**
 * The annotation toolbar (doc 3 §2), bottom right: Measurement, Line Measurement (celiac studies
 * with line classes), Text, Ellipse, and HPF / Point / Freehand with flyouts of their enabled
 * classes, each with its colour and its count on this image (a plain count button when the study
 * has none; display only without the permission to create), then Undo and Redo (issue 29) for a user
 * who may create.
 */
export function AnnotationToolbar({ tools }: { tools: AnnotationTools }) {
  const { session, drawing, context } = tools;
  const shown = ANNOTATION_TOOLS.filter((tool) => tool !== 'multiline' || session.celiac);
  return (
    <ButtonGroup className="lamina-viewer-panel lamina-annotation-toolbar" role="toolbar" aria-label="Annotation tools">
      {shown.map((tool) =>
        isClassTool(tool) ? (
          <ClassToolButton key={tool} tool={tool as ClassTool} tools={tools} />
        ) : (
          <Button
            key={tool}
            icon={TOOL_ICONS[tool]}
            variant="minimal"
            active={drawing.tool === tool}
            aria-pressed={drawing.tool === tool}
            aria-label={TOOL_LABELS[tool]}
            title={`${TOOL_LABELS[tool]} (${TOOL_KEYS[tool]})${reasonSuffix(toolDisabledReason(tool, context))}`}
            disabled={toolDisabledReason(tool, context) !== null}
            onClick={() => tools.choose(tool)}
          />
        ),
      )}
      <HistoryButtons tools={tools} />
    </ButtonGroup>
  );
}

/** Undo and Redo: disabled with nothing to undo or redo; the tooltip names the change and the keys. */
function HistoryButtons({ tools }: { tools: AnnotationTools }) {
  const { history, session, context } = tools;
  if (!history || !session.permissions.create) return null;
  const why = context.locked ? ` — ${ANNOTATION_MESSAGES.lockedScored}` : '';
  return (
    <>
      <Divider />
      <Button
        icon="undo"
        variant="minimal"
        aria-label="Undo"
        title={`${historyLabel('Undo', history.snapshot.undo)} (${UNDO_KEYS})${why}`}
        disabled={!history.canUndo}
        onClick={history.undo}
      />
      <Button
        icon="redo"
        variant="minimal"
        aria-label="Redo"
        title={`${historyLabel('Redo', history.snapshot.redo)} (${REDO_KEYS})${why}`}
        disabled={!history.canRedo}
        onClick={history.redo}
      />
    </>
  );
}

const reasonSuffix = (reason: string | null) => (reason ? ` — ${reason}` : '');

function ClassToolButton({ tool, tools }: { tool: ClassTool; tools: AnnotationTools }) {
  const { session, drawing, context, data } = tools;
  const classes = classesOfTool(tool, session.classes);
  const counts = useMemo(() => classCounts(data.annotations, tool), [data.annotations, tool]);
  const total = [...counts.values()].reduce((n, c) => n + c, 0);
  const refused = toolDisabledReason(tool, context);
  const active = drawing.tool === tool;
  const label = TOOL_LABELS[tool];
  if (classes.length === 0) {
    // No class: a plain button with the count (doc 3 §2).
    return (
      <Button
        icon={TOOL_ICONS[tool]}
        variant="minimal"
        active={active}
        aria-pressed={active}
        aria-label={`${label} (${total})`}
        title={`${label} (${TOOL_KEYS[tool]})${reasonSuffix(refused)}`}
        text={String(total)}
        disabled={refused !== null}
        onClick={() => (active ? tools.machine.setTool(null) : tools.choose(tool, null))}
      />
    );
  }
  const selected = classes.find((c) => c.id === tools.selectedClass[tool]);
  return (
    <PopoverNext
      placement="top-end"
      content={
        <Menu className="lamina-class-flyout" aria-label={`${label} classes`}>
          {classes.map((c) => (
            <MenuItem
              key={c.id}
              icon={<span className="lamina-class-swatch" style={{ background: c.color }} aria-hidden="true" />}
              text={c.name}
              label={String(counts.get(c.id) ?? 0)}
              active={active && selected?.id === c.id}
              // Without the permission to create, the flyout only shows the classes (doc 3 §2).
              disabled={refused !== null}
              shouldDismissPopover
              onClick={() => tools.choose(tool, c.id)}
            />
          ))}
          {refused && <li className="lamina-class-flyout-note bp6-text-muted">{refused}</li>}
        </Menu>
      }
    >
      <Button
        icon={
          active && selected ? (
            <span className="lamina-class-swatch" style={{ background: selected.color }} aria-hidden="true" />
          ) : (
            TOOL_ICONS[tool]
          )
        }
        variant="minimal"
        active={active}
        aria-pressed={active}
        aria-label={label}
        title={`${label} (${TOOL_KEYS[tool]})`}
        endIcon="caret-up"
      />
    </PopoverNext>
  );
}

/**
 * The ellipse being drawn, as the panel shows it (issue 29 item 4): its radii in µm and its area in
 * µm² from the slide's pixel size; in px only when the slide records none.
 */
export function ellipseSizeText(radiusX: number, radiusY: number, mpp: number | null): string {
  const um = physicalMicronsPerPixel(mpp);
  if (um === null) return `Radii ${Math.round(radiusX)} × ${Math.round(radiusY)} px`;
  const { area } = regionMeasures(
    { annotationType: 'ELLIPSE', geometry: { type: 'Point', coordinates: [0, 0] }, radius: null, radiusX, radiusY },
    um,
  );
  return `Radii ${formatMicrons(radiusX * um)} × ${formatMicrons(radiusY * um)} · ${formatAreaUm2(area ?? 0)}`;
}

/**
 * The 'Add annotation' panel (doc 3 §2, §4) for text, ellipse and HPF: open while the shape is
 * placed, with the optional message (required for text); 'Add annotation' follows
 * canAddAnnotation. The ellipse's radii show debounced (100 ms) and its rotation is set here.
 */
export function AddAnnotationPanel({ tools }: { tools: AnnotationTools }) {
  const { drawing } = tools;
  const tool = drawing.tool;
  const [text, setText] = useState('');
  const draft = useDebouncedValue(drawing.draft, ELLIPSE_DEBOUNCE_MS);
  if (!tool || !PANEL_TOOLS.includes(tool) || drawing.state !== 'EDITING') return null;
  const enabled = canAddAnnotation(tool, drawing.state, text) && !tools.saving;
  const add = () => {
    tools.addPlaced(text);
    setText('');
  };
  return (
    <section className="lamina-add-annotation lamina-viewer-panel" aria-label="Add annotation">
      <strong>Add annotation — {TOOL_LABELS[tool]}</strong>
      {tool === 'ellipse' && (
        <div className="lamina-add-annotation-row">
          <span className="bp6-text-muted" data-testid="ellipse-size">
            {ellipseSizeText(draft.radiusX, draft.radiusY, tools.session.mpp)}
          </span>
          <label>
            Rotation{' '}
            <input
              className="bp6-input bp6-small lamina-rotation-input"
              type="number"
              step={5}
              aria-label="Rotation (degrees)"
              value={drawing.draft.rotation}
              onChange={(e) => tools.machine.setRotation(Number(e.target.value))}
            />
            °
          </label>
        </div>
      )}
      <TextArea
        aria-label={tool === 'text' ? 'Annotation text' : 'Message (optional)'}
        placeholder={tool === 'text' ? 'Text (required)' : tool === 'hpf' ? 'Name (optional)' : 'Message (optional)'}
        value={text}
        autoFocus
        fill
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            tools.machine.cancel();
          }
        }}
      />
      <div className="lamina-add-annotation-actions">
        <Button text="Cancel" onClick={() => tools.machine.cancel()} />
        <Button intent="primary" text="Add annotation" disabled={!enabled} loading={tools.saving} onClick={add} />
      </div>
    </section>
  );
}

/** The active tool's hint, the multiline's next class and category, a failed save, a locked read. */
export function AnnotationMessages({ tools }: { tools: AnnotationTools }) {
  const { drawing, multiline, session, data } = tools;
  const tool = drawing.tool;
  const nextClass = multiline ? session.classes.multiline.find((c) => c.id === multiline.classId) : undefined;
  return (
    <div className="lamina-annotation-messages">
      {data.locked && session.permissions.create && (
        <Callout intent="warning" icon="lock" compact>
          {ANNOTATION_MESSAGES.lockedScored}
        </Callout>
      )}
      {tools.error && (
        <Callout intent="danger" compact role="alert" title={ANNOTATION_MESSAGES.unableToCreate}>
          {tools.error.replace(/^Unable to create annotation[.:]?\s*/, '') || tools.error}
          <Button size="small" variant="minimal" icon="cross" aria-label="Dismiss" onClick={tools.clearError} />
        </Callout>
      )}
      {tool && (
        <div className="lamina-viewer-panel lamina-tool-hint" role="status">
          <strong>{TOOL_LABELS[tool]}</strong> · {DRAWING_HINTS[tool]}
          {tool === 'multiline' &&
            (nextClass && multiline ? (
              <>
                {' '}
                · next:{' '}
                <span className="lamina-class-swatch" style={{ background: nextClass.color }} aria-hidden="true" />{' '}
                {nextClass.name} {MULTILINE_CATEGORY_LABELS[multiline.category]}
              </>
            ) : (
              ' · every line class is measured'
            ))}{' '}
          · Space pans · Esc cancels
        </div>
      )}
    </div>
  );
}
