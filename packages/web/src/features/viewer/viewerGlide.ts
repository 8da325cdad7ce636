import Kinetic from 'ol/Kinetic';

/**
 * How long a flick glides after the release, in ms. OpenLayers' DragPan always glides 500 ms
 * (ease-out), so a flicked view came to rest ~450 ms after the release; the viewer benchmark
 * (docs/BENCHMARKS.md, Viewer) asks for a complete, still view within 250 ms.
 */
export const GLIDE_MS = 220;

/** Below this release speed (px/ms) the view stops where the pointer left it. */
export const GLIDE_MIN_VELOCITY = 0.05;

/** The release speed is measured over the pointer's last moves within this many ms. */
export const GLIDE_SAMPLE_MS = 100;

/**
 * The drag's kinetics, measured as OpenLayers does, but the glide is the engine's: `end()` hands
 * the distance and angle to `onGlide` and tells DragPan not to animate. The decay makes the glide
 * start at the speed of the hand: an ease-out (cubic) glide of distance d over T starts at 3d/T,
 * and Kinetic's distance is (v - minVelocity) / -decay, so decay = -3 / T.
 */
export class Glide extends Kinetic {
  constructor(private readonly onGlide: (distance: number, angle: number) => void) {
    super(-3 / GLIDE_MS, GLIDE_MIN_VELOCITY, GLIDE_SAMPLE_MS);
  }

  override end(): boolean {
    if (super.end()) this.onGlide(this.getDistance(), this.getAngle());
    return false;
  }
}
