// A line chart (the page's experiments: a metric against heads removed or training steps): one
// layout (curveScene) drawn two ways, as SVG nodes (createElementNS, text through textContent;
// saved as the same SVG text, XMLSerializer) and on a canvas for a PNG. Presentation attributes
// only, no inline styles (the page runs under style-src 'self'); SVG text is currentColor, so the
// page's colour scheme applies on screen and black in a saved file.

const SVG_NS = 'http://www.w3.org/2000/svg';
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** The curve's and the reader's colours: viridis 0.5 (teal) and an orange, both legible on the light and the dark scheme. */
export const CURVE_COLOURS = { curve: '#21918c', mark: '#e66101' };

function node(tag, attrs = {}, text) {
  const n = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  if (text !== undefined) n.textContent = String(text);
  return n;
}

/** About five round tick values covering [lo, hi]. */
export function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * The chart as drawing items (the one layout both renderers draw): `points` [[x, y]] joined by
 * a line, `marks` [{x, y, label}] drawn apart (the reader's own measurements), axes with ticks and
 * labels, `title` on top.
 * @param {{points: number[][], marks?: {x: number, y: number, label: string}[], title: string,
 *   xLabel: string, yLabel: string, yFormat?: (y: number) => string, width?: number,
 *   height?: number, desc?: string}} p
 * @returns {{width: number, height: number, title: string, desc: string, items: object[]}}
 *   items: {line, x1, y1, x2, y2, opacity?} | {polyline: [[x, y]]} | {dot, x, y} |
 *   {diamond, x, y, label} | {text, x, y, anchor?, bold?, size?, rotate?, colour?}
 */
export function curveScene({
  points,
  marks = [],
  title,
  xLabel,
  yLabel,
  yFormat = (y) => y.toFixed(2),
  width = 560,
  height = 300,
  desc = '',
}) {
  const m = { left: 64, right: 16, top: 34, bottom: 46 };
  const all = [...points, ...marks.map((k) => [k.x, k.y])];
  const xs = all.map((q) => q[0]);
  const ys = all.map((q) => q[1]);
  const x0 = Math.min(0, ...xs),
    x1 = Math.max(...xs);
  let y0 = Math.min(...ys),
    y1 = Math.max(...ys);
  const pad = (y1 - y0) * 0.06 || Math.abs(y0) * 0.05 || 1;
  y0 -= pad;
  y1 += pad;
  const sx = (x) => m.left + ((x - x0) / (x1 - x0 || 1)) * (width - m.left - m.right);
  const sy = (y) => height - m.bottom - ((y - y0) / (y1 - y0)) * (height - m.top - m.bottom);
  const bottom = height - m.bottom;
  /** @type {any[]} */
  const items = [
    { text: title, x: m.left, y: 18, bold: true, size: 13 },
    { line: true, x1: m.left, y1: bottom, x2: width - m.right, y2: bottom },
    { line: true, x1: m.left, y1: m.top, x2: m.left, y2: bottom },
  ];
  const xStep = Math.max(1, Math.ceil((x1 - x0) / 12));
  for (const t of niceTicks(x0, x1, (x1 - x0) / xStep || 1)) {
    items.push({ line: true, x1: sx(t), x2: sx(t), y1: bottom, y2: bottom + 4 });
    items.push({ text: String(t), x: sx(t), y: bottom + 16, anchor: 'middle' });
  }
  for (const t of niceTicks(y0, y1)) {
    items.push({ line: true, x1: m.left - 4, x2: m.left, y1: sy(t), y2: sy(t) });
    items.push({
      line: true,
      x1: m.left,
      x2: width - m.right,
      y1: sy(t),
      y2: sy(t),
      opacity: 0.12,
    });
    items.push({ text: yFormat(t), x: m.left - 7, y: sy(t) + 4, anchor: 'end' });
  }
  const mid = (m.top + bottom) / 2;
  items.push({ text: xLabel, x: (m.left + width - m.right) / 2, y: height - 8, anchor: 'middle' });
  items.push({ text: yLabel, x: 14, y: mid, anchor: 'middle', rotate: -90 });
  items.push({ polyline: points.map(([x, y]) => [sx(x), sy(y)]) });
  for (const [x, y] of points) items.push({ dot: true, x: sx(x), y: sy(y) });
  // A mark's label right of it, or left of it near the right edge; marks at the same x stacked.
  const seen = new Map();
  for (const k of marks) {
    const x = sx(k.x),
      y = sy(k.y);
    const n = seen.get(k.x) ?? 0;
    seen.set(k.x, n + 1);
    const left = x > width - m.right - 130;
    items.push({ diamond: true, x, y, label: k.label });
    items.push({
      text: k.label,
      x: left ? x - 9 : x + 9,
      y: y - 8 - 14 * n,
      anchor: left ? 'end' : undefined,
      bold: true,
      colour: CURVE_COLOURS.mark,
    });
  }
  return { width, height, title, desc, items };
}

/** The chart (curveScene's parameters) as SVG nodes. @returns {SVGSVGElement} */
export function curveSvg(p) {
  const scene = curveScene(p);
  const { width, height } = scene;
  const svg = node('svg', {
    xmlns: SVG_NS,
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    'font-family': FONT,
    'font-size': 12,
    fill: 'currentColor',
    role: 'img',
  });
  svg.append(node('title', {}, scene.title));
  if (scene.desc) svg.append(node('desc', {}, scene.desc));
  for (const it of scene.items) {
    if (it.line) {
      svg.append(
        node('line', {
          x1: it.x1,
          y1: it.y1,
          x2: it.x2,
          y2: it.y2,
          stroke: 'currentColor',
          'stroke-width': 1,
          ...(it.opacity ? { 'stroke-opacity': it.opacity } : {}),
        }),
      );
    } else if (it.polyline) {
      const line = node('polyline', {
        points: it.polyline.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' '),
        fill: 'none',
        stroke: CURVE_COLOURS.curve,
        'stroke-width': 2,
      });
      line.dataset.series = 'curve';
      svg.append(line);
    } else if (it.dot) {
      svg.append(node('circle', { cx: it.x, cy: it.y, r: 2.5, fill: CURVE_COLOURS.curve }));
    } else if (it.diamond) {
      const { x, y } = it;
      svg.append(
        node('path', {
          d: `M${x} ${y - 6}L${x + 6} ${y}L${x} ${y + 6}L${x - 6} ${y}Z`,
          fill: CURVE_COLOURS.mark,
          'data-mark': it.label,
        }),
      );
    } else {
      svg.append(
        node(
          'text',
          {
            x: it.x,
            y: it.y,
            ...(it.anchor ? { 'text-anchor': it.anchor } : {}),
            ...(it.bold ? { 'font-weight': 'bold' } : {}),
            ...(it.size ? { 'font-size': it.size } : {}),
            ...(it.colour ? { fill: it.colour } : {}),
            ...(it.rotate ? { transform: `rotate(${it.rotate} ${it.x} ${it.y})` } : {}),
          },
          it.text,
        ),
      );
    }
  }
  return svg;
}

/**
 * The chart as an SVG file's text: black ink on a white background (on screen its ink is the
 * page's currentColor, which a file viewed elsewhere does not have).
 */
export function svgText(svg) {
  const copy = /** @type {SVGSVGElement} */ (svg.cloneNode(true));
  copy.setAttribute('color', '#000000');
  const background = node('rect', { width: '100%', height: '100%', fill: '#ffffff' });
  copy.insertBefore(background, copy.querySelector('text, line') ?? null);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(copy)}\n`;
}

/**
 * The chart (curveScene's parameters) drawn on a canvas at `scale` times its size, black on
 * white (the page's CSP refuses an SVG drawn as an image from a blob: URL), as a PNG Blob.
 * @returns {Promise<Blob>}
 */
export function curvePng(p, scale = 2) {
  const scene = curveScene(p);
  const canvas = document.createElement('canvas');
  canvas.width = scene.width * scale;
  canvas.height = scene.height * scale;
  const ctx = canvas.getContext('2d');
  ctx.scale(scale, scale);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, scene.width, scene.height);
  const ink = '#000000';
  for (const it of scene.items) {
    ctx.save();
    if (it.line) {
      ctx.strokeStyle = ink;
      ctx.globalAlpha = it.opacity ?? 1;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(it.x1, it.y1);
      ctx.lineTo(it.x2, it.y2);
      ctx.stroke();
    } else if (it.polyline) {
      ctx.strokeStyle = CURVE_COLOURS.curve;
      ctx.lineWidth = 2;
      ctx.beginPath();
      it.polyline.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.stroke();
    } else if (it.dot) {
      ctx.fillStyle = CURVE_COLOURS.curve;
      ctx.beginPath();
      ctx.arc(it.x, it.y, 2.5, 0, 2 * Math.PI);
      ctx.fill();
    } else if (it.diamond) {
      ctx.fillStyle = CURVE_COLOURS.mark;
      ctx.beginPath();
      ctx.moveTo(it.x, it.y - 6);
      ctx.lineTo(it.x + 6, it.y);
      ctx.lineTo(it.x, it.y + 6);
      ctx.lineTo(it.x - 6, it.y);
      ctx.closePath();
      ctx.fill();
    } else {
      ctx.fillStyle = it.colour ?? ink;
      ctx.font = `${it.bold ? 'bold ' : ''}${it.size ?? 12}px ${FONT}`;
      ctx.textAlign = it.anchor === 'middle' ? 'center' : it.anchor === 'end' ? 'right' : 'left';
      ctx.translate(it.x, it.y);
      if (it.rotate) ctx.rotate((it.rotate * Math.PI) / 180);
      ctx.fillText(it.text, 0, 0);
    }
    ctx.restore();
  }
  return new Promise((resolve, reject) =>
    canvas.toBlob(
      (b) => (b ? resolve(b) : reject(new Error('the browser could not encode the PNG'))),
      'image/png',
    ),
  );
}
