import { HPF_HIGHLIGHT_RING, HPF_WEIGHT, HPF_WEIGHT_HIGHLIGHTED } from '@lamina/domain';
import type { FrameState } from 'ol/Map';
import Layer from 'ol/layer/Layer';
import { POINT_OUTLINE, POINT_OUTLINE_WIDTH, pointScreenRadius } from './annotationStyle';

/** Floats per object in the instance buffers. */
const STRIDE = 12;
/** Segments of an HPF ring (round to about a pixel at a radius of 2,000 screen pixels). */
const RING_SEGMENTS = 96;
/** The width of the highlight ring at 1.1× the radius, in screen pixels. */
const HIGHLIGHT_RING_WIDTH = 2;

export interface GlHighlight {
  hpf: number;
  hpfClass: number;
  pointHpf: number;
  pointClass: number;
}

const VERTEX = `#version 300 es
in vec3 a_shape;
in vec2 a_pos;
in float a_r;
in float a_kind;
in float a_id;
in float a_cls;
in float a_par;
in float a_vis;
in vec4 a_color;
uniform vec2 u_center;
uniform float u_res;
uniform vec2 u_size;
uniform float u_pointR;
uniform float u_pass;
uniform vec4 u_hl;
out vec2 v_local;
out float v_r;
out float v_side;
out float v_half;
out float v_lit;
out vec4 v_color;
void main() {
  bool hpf = a_kind > 0.5;
  bool lit = hpf
    ? (a_id == u_hl.x || a_cls == u_hl.y)
    : ((a_par == u_hl.z && a_cls == u_hl.w) || a_par == u_hl.x);
  if (a_vis < 0.5 || (u_pass > 0.5 && !lit)) { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); return; }
  vec2 centre = (a_pos - u_center) / u_res;
  vec2 offset;
  if (hpf) {
    float r = a_r / u_res * (u_pass > 0.5 ? ${HPF_HIGHLIGHT_RING.toFixed(2)} : 1.0);
    float hw = u_pass > 0.5 ? ${(HIGHLIGHT_RING_WIDTH / 2).toFixed(1)} : (lit ? ${(HPF_WEIGHT_HIGHLIGHTED / 2).toFixed(1)} : ${(HPF_WEIGHT / 2).toFixed(1)});
    offset = a_shape.xy * (r + a_shape.z * (hw + 1.0));
    v_side = a_shape.z;
    v_half = hw;
    v_r = r;
  } else {
    float r = lit ? u_pointR * 2.5 : u_pointR;
    offset = a_shape.xy * (r + ${(POINT_OUTLINE_WIDTH + 1).toFixed(1)});
    v_local = offset;
    v_r = r;
  }
  vec2 screen = centre + offset;
  gl_Position = vec4(screen * 2.0 / u_size, 0.0, 1.0);
  v_lit = lit ? 1.0 : 0.0;
  v_color = a_color;
}`;

const FRAGMENT = `#version 300 es
precision highp float;
in vec2 v_local;
in float v_r;
in float v_side;
in float v_half;
in float v_lit;
in vec4 v_color;
uniform float u_ring;
uniform float u_opacity;
out vec4 outColor;
const vec4 OUTLINE = vec4(${POINT_OUTLINE.map((v) => v.toFixed(4)).join(', ')});
void main() {
  vec3 rgb = v_color.rgb;
  if (u_ring > 0.5) {
    float alpha = clamp(v_half + 0.5 - abs(v_side) * (v_half + 1.0), 0.0, 1.0) * v_color.a * u_opacity;
    if (alpha <= 0.0) discard;
    outColor = vec4(rgb * alpha, alpha);
    return;
  }
  // A point: its fill to v_r, then the dark ring, POINT_OUTLINE_WIDTH wide, just outside it.
  float d = length(v_local);
  float fill = clamp(v_r + 0.5 - d, 0.0, 1.0);
  float ring = clamp(v_r + ${POINT_OUTLINE_WIDTH.toFixed(1)} + 0.5 - d, 0.0, 1.0) - fill;
  if (v_lit > 0.5 && d > v_r - 1.5) rgb = vec3(1.0);
  float fillAlpha = fill * v_color.a;
  float ringAlpha = ring * OUTLINE.a;
  float alpha = (fillAlpha + ringAlpha) * u_opacity;
  if (alpha <= 0.0) discard;
  outColor = vec4((rgb * fillAlpha + OUTLINE.rgb * ringAlpha) * u_opacity, alpha);
}`;

const INSTANCE_ATTRIBUTES: [string, number, number][] = [
  ['a_pos', 2, 0],
  ['a_r', 1, 2],
  ['a_kind', 1, 3],
  ['a_id', 1, 4],
  ['a_cls', 1, 5],
  ['a_par', 1, 6],
  ['a_vis', 1, 7],
  ['a_color', 4, 8],
];

/**
 * Whether WebGL runs in software (SwiftShader, llvmpipe: headless Chromium, machines without a
 * GPU). There each instance costs about 23 µs — 200,000 points took 4.6 s a frame — while writing
 * the points' pixels from the CPU takes about 20 ms, so the layer rasterises points itself.
 */
export function softwareWebgl(gl: WebGL2RenderingContext): boolean {
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const renderer = info ? String(gl.getParameter(info.UNMASKED_RENDERER_WEBGL)) : '';
  return /swiftshader|llvmpipe|software/i.test(renderer);
}

/** Whether this browser can draw the WebGL annotation layer (WebGL 2). */
export function webgl2Available(): boolean {
  try {
    return !!document.createElement('canvas').getContext('webgl2');
  } catch {
    return false;
  }
}

/**
 * Points and HPFs drawn straight from typed arrays with instanced WebGL 2 (an OpenLayers layer with
 * its own render function and canvas): 200,000 objects are one buffer upload when they load, and
 * each frame is a few uniforms and three draw calls — panning and zooming never rebuild anything.
 * Points are discs of their on-screen radius (pointScreenRadius: the spec's at full resolution, never
 * under 4 px) in a dark ring, HPFs rings of their image-pixel radius drawn as
 * annuli (only the ring's pixels are shaded), the highlight ring at 1.1× in a second pass. The
 * highlight and the opacity are uniforms; visibility is a flag per object.
 */
export class GlAnnotationLayer extends Layer {
  private readonly canvas: HTMLCanvasElement;
  /** Set up on first need (setUp): a WebGL context costs tens of ms, and a slide without points or HPFs needs none. */
  private setUpDone = false;
  private gl: WebGL2RenderingContext | null = null;
  private program: WebGLProgram | null = null;
  private readonly uniforms = new Map<string, WebGLUniformLocation | null>();
  private buffers: {
    quad: WebGLBuffer;
    ring: WebGLBuffer;
    points: WebGLBuffer;
    hpfs: WebGLBuffer;
  } | null = null;
  private pointCount = 0;
  private hpfCount = 0;
  private highlight: GlHighlight = { hpf: -9, hpfClass: -9, pointHpf: -9, pointClass: -9 };
  /** Software WebGL: points rasterised on the CPU, HPFs stroked on a 2D canvas (softwareWebgl). */
  private cpu: { canvas: HTMLCanvasElement; ctx: CanvasRenderingContext2D } | null = null;
  private pointData: GlObjects | null = null;
  private hpfData: GlObjects | null = null;
  /** Told after each frame drawn (the first frame after a load announces the annotations). */
  onDrawn: (() => void) | null = null;

  /** `pointRadius`: the spec's point radius (pointLook), the size at full resolution. */
  constructor(
    private readonly pointRadius: number,
    className: string,
  ) {
    super({ className });
    this.canvas = document.createElement('canvas');
    this.canvas.className = className;
    Object.assign(this.canvas.style, { position: 'absolute', left: '0', top: '0', pointerEvents: 'none' });
  }

  /**
   * The WebGL context, program and buffers, or the software path's canvas — once, when first asked
   * whether the layer can draw or given objects, so that opening a slide never waits for it.
   */
  private setUp(): void {
    if (this.setUpDone) return;
    this.setUpDone = true;
    this.gl = this.canvas.getContext('webgl2', { premultipliedAlpha: true, antialias: false, depth: false });
    const gl = this.gl;
    if (!gl) return;
    if (softwareWebgl(gl)) {
      const canvas = document.createElement('canvas');
      canvas.className = this.canvas.className;
      Object.assign(canvas.style, { position: 'absolute', left: '0', top: '0', pointerEvents: 'none' });
      const ctx = canvas.getContext('2d');
      if (ctx) {
        this.cpu = { canvas, ctx };
        // Only asked which renderer runs: give the context back (a page holds few at once).
        gl.getExtension('WEBGL_lose_context')?.loseContext();
        return;
      }
    }
    const program = link(gl, VERTEX, FRAGMENT);
    if (!program) return;
    this.program = program;
    for (const name of ['u_center', 'u_res', 'u_size', 'u_pointR', 'u_pass', 'u_hl', 'u_ring', 'u_opacity'])
      this.uniforms.set(name, gl.getUniformLocation(program, name));
    const make = () => gl.createBuffer();
    const quad = make();
    const ring = make();
    const points = make();
    const hpfs = make();
    gl.bindBuffer(gl.ARRAY_BUFFER, quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 0, 1, -1, 0, -1, 1, 0, 1, 1, 0]), gl.STATIC_DRAW);
    const annulus: number[] = [];
    for (let i = 0; i <= RING_SEGMENTS; i++) {
      const t = (2 * Math.PI * i) / RING_SEGMENTS;
      annulus.push(Math.cos(t), Math.sin(t), -1, Math.cos(t), Math.sin(t), 1);
    }
    gl.bindBuffer(gl.ARRAY_BUFFER, ring);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(annulus), gl.STATIC_DRAW);
    this.buffers = { quad, ring, points, hpfs };
  }

  /** Whether WebGL (or the software path) has been set up: objects were given or `available` asked. */
  get ready(): boolean {
    return this.setUpDone;
  }

  /** False when the browser has no WebGL 2 (the caller draws points and HPFs on a canvas instead). */
  get available(): boolean {
    this.setUp();
    return this.cpu !== null || (this.program !== null && this.buffers !== null);
  }

  /** Every point and HPF, uploaded at once (a load, a create, a delete, a visibility change). */
  setObjects(points: GlObjects, hpfs: GlObjects): void {
    this.setUp();
    this.pointData = points;
    this.hpfData = hpfs;
    if (this.cpu) {
      this.pointCount = points.count;
      this.hpfCount = hpfs.count;
      this.changed();
      return;
    }
    const gl = this.gl;
    if (!gl || !this.buffers) return;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffers.points);
    gl.bufferData(gl.ARRAY_BUFFER, points.data.subarray(0, points.count * STRIDE), gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffers.hpfs);
    gl.bufferData(gl.ARRAY_BUFFER, hpfs.data.subarray(0, hpfs.count * STRIDE), gl.STATIC_DRAW);
    this.pointCount = points.count;
    this.hpfCount = hpfs.count;
    this.changed();
  }

  setHighlight(highlight: GlHighlight): void {
    this.highlight = highlight;
    this.changed();
  }

  override render(frameState: FrameState | null): HTMLElement {
    // Nothing given yet: an empty canvas, without setting WebGL up for it.
    if (!this.setUpDone) {
      this.onDrawn?.();
      return this.canvas;
    }
    if (this.cpu) return this.renderCpu(frameState, this.cpu.canvas, this.cpu.ctx);
    const gl = this.gl;
    const program = this.program;
    if (!frameState || !gl || !program || !this.buffers) return this.canvas;
    const [width, height] = frameState.size;
    const ratio = frameState.pixelRatio;
    const w = Math.round((width ?? 0) * ratio);
    const h = Math.round((height ?? 0) * ratio);
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${height}px`;
    }
    gl.viewport(0, 0, w, h);
    gl.clearColor(0, 0, 0, 0);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.useProgram(program);
    const u = (name: string) => this.uniforms.get(name) ?? null;
    const { center, resolution } = frameState.viewState;
    gl.uniform2f(u('u_center'), center[0] ?? 0, center[1] ?? 0);
    gl.uniform1f(u('u_res'), resolution);
    gl.uniform2f(u('u_size'), width ?? 1, height ?? 1);
    gl.uniform1f(u('u_pointR'), pointScreenRadius(this.pointRadius, resolution));
    const hl = this.highlight;
    gl.uniform4f(u('u_hl'), hl.hpf, hl.hpfClass, hl.pointHpf, hl.pointClass);
    gl.uniform1f(u('u_opacity'), this.getOpacity());
    // HPF rings, the highlight rings at 1.1×, then the points above them.
    if (this.hpfCount > 0) {
      this.bind(gl, program, this.buffers.ring, this.buffers.hpfs);
      gl.uniform1f(u('u_ring'), 1);
      gl.uniform1f(u('u_pass'), 0);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, (RING_SEGMENTS + 1) * 2, this.hpfCount);
      gl.uniform1f(u('u_pass'), 1);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, (RING_SEGMENTS + 1) * 2, this.hpfCount);
    }
    if (this.pointCount > 0) {
      this.bind(gl, program, this.buffers.quad, this.buffers.points);
      gl.uniform1f(u('u_ring'), 0);
      gl.uniform1f(u('u_pass'), 0);
      gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, this.pointCount);
    }
    this.onDrawn?.();
    return this.canvas;
  }

  /**
   * The software path: each visible point's disc written into an ImageData (alpha-blended), then
   * the HPF rings in view stroked on top. Same look and highlight as the WebGL path.
   */
  private renderCpu(
    frameState: FrameState | null,
    canvas: HTMLCanvasElement,
    ctx: CanvasRenderingContext2D,
  ): HTMLElement {
    if (!frameState) return canvas;
    const [width = 0, height = 0] = frameState.size;
    const ratio = frameState.pixelRatio;
    const w = Math.round(width * ratio);
    const h = Math.round(height * ratio);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
      canvas.style.width = `${width}px`;
      canvas.style.height = `${height}px`;
    }
    canvas.style.opacity = String(this.getOpacity());
    ctx.clearRect(0, 0, w, h);
    const { center, resolution } = frameState.viewState;
    const cx = center[0] ?? 0;
    const cy = center[1] ?? 0;
    const scale = ratio / resolution;
    const hl = this.highlight;
    const points = this.pointData;
    if (points && points.count > 0 && w > 0 && h > 0) {
      const image = ctx.createImageData(w, h);
      const px = image.data;
      const d = points.data;
      const radius = pointScreenRadius(this.pointRadius, resolution) * ratio;
      const outline = POINT_OUTLINE_WIDTH * ratio;
      for (let i = 0; i < points.count; i++) {
        const o = i * STRIDE;
        if (d[o + 7] === 0) continue;
        const sx = ((d[o] ?? 0) - cx) * scale + w / 2;
        const sy = h / 2 - ((d[o + 1] ?? 0) - cy) * scale;
        if (sx < -20 || sy < -20 || sx > w + 20 || sy > h + 20) continue;
        const par = d[o + 6];
        const lit = (par === hl.pointHpf && d[o + 5] === hl.pointClass) || par === hl.hpf;
        const r = lit ? radius * 2.5 : radius;
        disc(px, w, h, sx, sy, r, outline, d[o + 8] ?? 1, d[o + 9] ?? 1, d[o + 10] ?? 0, d[o + 11] ?? 1, lit);
      }
      ctx.putImageData(image, 0, 0);
    }
    const hpfs = this.hpfData;
    if (hpfs && hpfs.count > 0) {
      const d = hpfs.data;
      for (let i = 0; i < hpfs.count; i++) {
        const o = i * STRIDE;
        if (d[o + 7] === 0) continue;
        const r = (d[o + 2] ?? 0) * scale;
        const sx = ((d[o] ?? 0) - cx) * scale + w / 2;
        const sy = h / 2 - ((d[o + 1] ?? 0) - cy) * scale;
        if (sx + r * 1.2 < 0 || sy + r * 1.2 < 0 || sx - r * 1.2 > w || sy - r * 1.2 > h) continue;
        const lit = d[o + 4] === hl.hpf || d[o + 5] === hl.hpfClass;
        const colour = `rgb(${Math.round((d[o + 8] ?? 0) * 255)},${Math.round((d[o + 9] ?? 1) * 255)},${Math.round((d[o + 10] ?? 0) * 255)})`;
        ctx.strokeStyle = colour;
        ctx.lineWidth = (lit ? HPF_WEIGHT_HIGHLIGHTED : HPF_WEIGHT) * ratio;
        ctx.beginPath();
        ctx.arc(sx, sy, r, 0, 2 * Math.PI);
        ctx.stroke();
        if (lit) {
          ctx.lineWidth = HIGHLIGHT_RING_WIDTH * ratio;
          ctx.beginPath();
          ctx.arc(sx, sy, r * HPF_HIGHLIGHT_RING, 0, 2 * Math.PI);
          ctx.stroke();
        }
      }
    }
    this.onDrawn?.();
    return canvas;
  }

  private bind(gl: WebGL2RenderingContext, program: WebGLProgram, shape: WebGLBuffer, instances: WebGLBuffer): void {
    gl.bindBuffer(gl.ARRAY_BUFFER, shape);
    const shapeAt = gl.getAttribLocation(program, 'a_shape');
    gl.enableVertexAttribArray(shapeAt);
    gl.vertexAttribPointer(shapeAt, 3, gl.FLOAT, false, 12, 0);
    gl.vertexAttribDivisor(shapeAt, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, instances);
    for (const [name, size, offset] of INSTANCE_ATTRIBUTES) {
      const at = gl.getAttribLocation(program, name);
      if (at < 0) continue;
      gl.enableVertexAttribArray(at);
      gl.vertexAttribPointer(at, size, gl.FLOAT, false, STRIDE * 4, offset * 4);
      gl.vertexAttribDivisor(at, 1);
    }
  }

  override disposeInternal(): void {
    const gl = this.gl;
    if (gl && this.buffers) for (const b of Object.values(this.buffers)) gl.deleteBuffer(b);
    if (gl && this.program) gl.deleteProgram(this.program);
    // Released now, not at garbage collection: switching a case's images makes a layer per image.
    if (gl && !this.cpu) gl.getExtension('WEBGL_lose_context')?.loseContext();
    super.disposeInternal();
  }
}

/** Objects packed for the layer: STRIDE floats each (see GlObjects.push). */
export class GlObjects {
  data: Float32Array;
  count = 0;

  constructor(
    capacity: number,
    private readonly kind: 0 | 1,
  ) {
    this.data = new Float32Array(Math.max(1, capacity) * STRIDE);
  }

  /** x, y in map coordinates; radius in image pixels (HPFs); rgba 0…1. */
  push(
    x: number,
    y: number,
    radius: number,
    id: number,
    cls: number,
    par: number,
    visible: boolean,
    rgba: readonly number[],
  ): void {
    if ((this.count + 1) * STRIDE > this.data.length) {
      const grown = new Float32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    const d = this.data;
    const o = this.count * STRIDE;
    d[o] = x;
    d[o + 1] = y;
    d[o + 2] = radius;
    d[o + 3] = this.kind;
    d[o + 4] = id;
    d[o + 5] = cls;
    d[o + 6] = par;
    d[o + 7] = visible ? 1 : 0;
    d[o + 8] = rgba[0] ?? 1;
    d[o + 9] = rgba[1] ?? 1;
    d[o + 10] = rgba[2] ?? 0;
    d[o + 11] = rgba[3] ?? 1;
    this.count++;
  }
}

/**
 * A disc of colour (r, g, b in 0…1, opacity a) of `radius` in a ring of POINT_OUTLINE `outline`
 * wide, blended into RGBA pixels (w × h); `edge`: a white rim inside (the highlight). Exported for tests.
 */
export function disc(
  px: Uint8ClampedArray,
  w: number,
  h: number,
  sx: number,
  sy: number,
  radius: number,
  outline: number,
  r: number,
  g: number,
  b: number,
  a: number,
  edge: boolean,
): void {
  const outer = radius + outline;
  const x0 = Math.max(0, Math.floor(sx - outer));
  const x1 = Math.min(w - 1, Math.ceil(sx + outer));
  const y0 = Math.max(0, Math.floor(sy - outer));
  const y1 = Math.min(h - 1, Math.ceil(sy + outer));
  const r2 = radius * radius;
  const o2 = outer * outer;
  const inner = edge ? (radius - 1.5) * (radius - 1.5) : -1;
  const [or, og, ob, oa0] = POINT_OUTLINE;
  for (let y = y0; y <= y1; y++) {
    const dy = y + 0.5 - sy;
    for (let x = x0; x <= x1; x++) {
      const dx = x + 0.5 - sx;
      const dd = dx * dx + dy * dy;
      // Strictly inside: a pixel centred exactly on the outer circle would stick out alone.
      if (dd >= o2) continue;
      const ring = dd >= r2;
      const white = !ring && edge && dd > inner;
      const sa = ring ? oa0 : a;
      const i = (y * w + x) * 4;
      const da = (px[i + 3] ?? 0) / 255;
      const oa = sa + da * (1 - sa);
      const mix = (src: number, dst: number) => ((src * sa + (dst / 255) * da * (1 - sa)) / oa) * 255;
      px[i] = mix(ring ? or : white ? 1 : r, px[i] ?? 0);
      px[i + 1] = mix(ring ? og : white ? 1 : g, px[i + 1] ?? 0);
      px[i + 2] = mix(ring ? ob : white ? 1 : b, px[i + 2] ?? 0);
      px[i + 3] = oa * 255;
    }
  }
}

function link(gl: WebGL2RenderingContext, vertex: string, fragment: string): WebGLProgram | null {
  const compile = (type: number, source: string) => {
    const shader = gl.createShader(type);
    if (!shader) return null;
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) {
      console.error('annotation layer shader:', gl.getShaderInfoLog(shader));
      return null;
    }
    return shader;
  };
  const vs = compile(gl.VERTEX_SHADER, vertex);
  const fs = compile(gl.FRAGMENT_SHADER, fragment);
  const program = gl.createProgram();
  if (!vs || !fs) return null;
  gl.attachShader(program, vs);
  gl.attachShader(program, fs);
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) {
    console.error('annotation layer program:', gl.getProgramInfoLog(program));
    return null;
  }
  return program;
}
