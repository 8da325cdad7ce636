import { Button, ButtonGroup, Slider } from '@blueprintjs/core';
import type { Ref } from 'react';
import type { ViewerCommand, ViewerSnapshot } from './ViewerEngine';
import { formatMagnification } from './viewerGeometry';
import { BRIGHTNESS_RANGE, OPACITY_RANGE } from './viewerPreferences';

/** A captioned whole-number slider of the view settings (brightness, opacity). */
function SettingSlider(props: {
  caption: string;
  /** The handle's accessible name. */
  label: string;
  range: { min: number; max: number };
  value: number;
  onChange: (value: number) => void;
}) {
  return (
    <label className="lamina-brightness">
      <span className="lamina-viewer-caption">{props.caption}</span>
      <Slider
        min={props.range.min}
        max={props.range.max}
        stepSize={1}
        labelRenderer={false}
        value={props.value}
        onChange={props.onChange}
        handleHtmlProps={{ 'aria-label': props.label }}
      />
    </label>
  );
}

interface ViewerControlsProps {
  snapshot: ViewerSnapshot;
  stackSize: number;
  onCommand: (command: ViewerCommand) => void;
  /** Where the engine draws the mini-map (180 x 180). */
  miniMapRef: Ref<HTMLDivElement>;
  /** Brightness adjust −100…100 (doc 3 §9). */
  brightness: number;
  onBrightness: (value: number) => void;
  /** Microscope mode: the surround dimmed with 70% black (doc 3 §2, §9). */
  microscope: boolean;
  onMicroscope: (on: boolean) => void;
  /** The annotations' opacity 0…100 (issue 29 item 16); no slider when null (no annotations shown). */
  annotationOpacity: number | null;
  onAnnotationOpacity: (value: number) => void;
  /** The AI annotations' opacity 0…100; the slider shows only when the image has AI annotations. */
  aiOpacity: number | null;
  onAiOpacity: (value: number) => void;
}

/**
 * Bottom-left controls (doc 3 §2): z-stack slider, mini-map and its toggle, zoom with magnification,
 * microscope mode, brightness, scale bar, the annotation opacity slider while annotations are shown,
 * and the AI opacity slider when the image has AI annotations.
 */
export function ViewerControls(props: ViewerControlsProps) {
  const { snapshot, stackSize, onCommand, miniMapRef } = props;
  const { view, miniMapExpanded, overlaysVisible, stack } = snapshot;
  return (
    <div className="lamina-viewer-controls" hidden={!overlaysVisible} data-testid="viewer-controls">
      {stackSize > 1 && view.atMaxZoom && (
        <div className="lamina-viewer-panel lamina-zstack">
          <span className="lamina-viewer-caption">Z-stack</span>
          <Slider
            min={0}
            max={stackSize - 1}
            stepSize={1}
            labelStepSize={Math.max(1, stackSize - 1)}
            value={stack}
            handleHtmlProps={{ 'aria-label': 'Z-stack plane' }}
            onChange={(index) => onCommand({ type: 'setStack', index })}
          />
        </div>
      )}
      <div className="lamina-viewer-panel lamina-minimap-panel">
        <div ref={miniMapRef} className="lamina-minimap" hidden={!miniMapExpanded} data-testid="mini-map" />
        <Button
          size="small"
          variant="minimal"
          icon={miniMapExpanded ? 'chevron-down' : 'chevron-up'}
          text="Mini-map"
          aria-expanded={miniMapExpanded}
          onClick={() => onCommand({ type: 'toggleMiniMap' })}
        />
      </div>
      <div className="lamina-viewer-panel lamina-zoom">
        <ButtonGroup>
          <Button icon="zoom-out" aria-label="Zoom out" onClick={() => onCommand({ type: 'zoomOut' })} />
          <span
            className="lamina-magnification"
            aria-label="Magnification"
            data-testid="magnification"
            title={view.digitalZoom ? 'Above the scan’s native magnification: digital zoom' : undefined}
          >
            {formatMagnification(view.magnification)}
            {view.digitalZoom && <span className="lamina-digital-zoom"> digital</span>}
          </span>
          <Button icon="zoom-in" aria-label="Zoom in" onClick={() => onCommand({ type: 'zoomIn' })} />
        </ButtonGroup>
      </div>
      <div className="lamina-viewer-panel lamina-view-settings">
        {/* A toggle that looks pressed when on (issue 29 item 17): the solid variant read as a plain button. */}
        <Button
          size="small"
          variant="minimal"
          className="lamina-microscope-toggle"
          active={props.microscope}
          intent={props.microscope ? 'primary' : 'none'}
          icon="circle"
          text="Microscope"
          aria-pressed={props.microscope}
          onClick={() => props.onMicroscope(!props.microscope)}
        />
        <SettingSlider
          caption="Brightness"
          label="Brightness"
          range={BRIGHTNESS_RANGE}
          value={props.brightness}
          onChange={props.onBrightness}
        />
        {props.annotationOpacity !== null && (
          <div data-testid="annotation-opacity">
            <SettingSlider
              caption="Opacity"
              label="Annotation opacity"
              range={OPACITY_RANGE}
              value={props.annotationOpacity}
              onChange={props.onAnnotationOpacity}
            />
          </div>
        )}
      </div>
      <div
        className="lamina-viewer-panel lamina-scale-bar"
        data-testid="scale-bar"
        title={
          view.scaleBar.calibrated
            ? undefined
            : 'This slide records no pixel size: lengths assume 0.2 µm per pixel and are estimates'
        }
      >
        <div className="lamina-scale-bar-line" style={{ width: view.scaleBar.widthPx }} />
        <span>{view.scaleBar.label}</span>
      </div>
      {props.aiOpacity !== null && (
        <div className="lamina-viewer-panel" data-testid="ai-opacity">
          <SettingSlider
            caption="AI opacity"
            label="AI annotation opacity"
            range={OPACITY_RANGE}
            value={props.aiOpacity}
            onChange={props.onAiOpacity}
          />
        </div>
      )}
    </div>
  );
}
