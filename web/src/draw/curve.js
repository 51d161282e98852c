// A line chart as SVG (the page's experiments: a metric against heads removed): built as DOM
// nodes (createElementNS, text through textContent), saved as the same SVG text (XMLSerializer)
// or drawn to a PNG. Presentation attributes only, no inline styles (the page runs under
// style-src 'self'); text is currentColor, so the page's colour scheme applies on screen and
// black in a saved file.

const SVG_NS = 'http://www.w3.org/2000/svg';
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** The curve's and the reader's colours (viridis 0.25 and an orange that reads on both schemes). */
export const CURVE_COLOURS = { curve: '#3b528b', mark: '#e66101' };

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
 * The chart: `points` [[x, y]] joined by a line, `marks` [{x, y, label}] drawn apart (the
 * reader's own measurements), axes with ticks and labels, `title` on top.
 * @param {{points: number[][], marks?: {x: number, y: number, label: string}[], title: string,
 *   xLabel: string, yLabel: string, yFormat?: (y: number) => string, width?: number,
 *   height?: number, desc?: string}} p
 * @returns {SVGSVGElement}
 */
export function curveSvg({
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
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const x0 = Math.min(0, ...xs),
    x1 = Math.max(...xs);
  let y0 = Math.min(...ys),
    y1 = Math.max(...ys);
  const pad = (y1 - y0) * 0.06 || Math.abs(y0) * 0.05 || 1;
  y0 -= pad;
  y1 += pad;
  const sx = (x) => m.left + ((x - x0) / (x1 - x0 || 1)) * (width - m.left - m.right);
  const sy = (y) => height - m.bottom - ((y - y0) / (y1 - y0)) * (height - m.top - m.bottom);
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
  svg.append(node('title', {}, title));
  if (desc) svg.append(node('desc', {}, desc));
  svg.append(node('text', { x: m.left, y: 18, 'font-weight': 'bold', 'font-size': 13 }, title));
  const axis = { stroke: 'currentColor', 'stroke-width': 1, fill: 'none' };
  svg.append(
    node('line', {
      ...axis,
      x1: m.left,
      y1: height - m.bottom,
      x2: width - m.right,
      y2: height - m.bottom,
    }),
  );
  svg.append(node('line', { ...axis, x1: m.left, y1: m.top, x2: m.left, y2: height - m.bottom }));
  for (const t of niceTicks(x0, x1, Math.min(12, x1 - x0 || 1))) {
    if (!Number.isInteger(t)) continue;
    svg.append(
      node('line', {
        ...axis,
        x1: sx(t),
        x2: sx(t),
        y1: height - m.bottom,
        y2: height - m.bottom + 4,
      }),
    );
    svg.append(node('text', { x: sx(t), y: height - m.bottom + 16, 'text-anchor': 'middle' }, t));
  }
  for (const t of niceTicks(y0, y1)) {
    svg.append(node('line', { ...axis, x1: m.left - 4, x2: m.left, y1: sy(t), y2: sy(t) }));
    svg.append(
      node('line', {
        x1: m.left,
        x2: width - m.right,
        y1: sy(t),
        y2: sy(t),
        stroke: 'currentColor',
        'stroke-opacity': 0.12,
      }),
    );
    svg.append(node('text', { x: m.left - 7, y: sy(t) + 4, 'text-anchor': 'end' }, yFormat(t)));
  }
  svg.append(
    node(
      'text',
      { x: (m.left + width - m.right) / 2, y: height - 8, 'text-anchor': 'middle' },
      xLabel,
    ),
  );
  svg.append(
    node(
      'text',
      {
        x: 14,
        y: (m.top + height - m.bottom) / 2,
        'text-anchor': 'middle',
        transform: `rotate(-90 14 ${(m.top + height - m.bottom) / 2})`,
      },
      yLabel,
    ),
  );
  const line = node('polyline', {
    points: points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' '),
    fill: 'none',
    stroke: CURVE_COLOURS.curve,
    'stroke-width': 2,
  });
  line.dataset.series = 'curve';
  svg.append(line);
  for (const [x, y] of points)
    svg.append(node('circle', { cx: sx(x), cy: sy(y), r: 2.5, fill: CURVE_COLOURS.curve }));
  for (const k of marks) {
    const g = node('g', { 'data-mark': k.label });
    const cx = sx(k.x),
      cy = sy(k.y);
    g.append(
      node('path', {
        d: `M${cx} ${cy - 6}L${cx + 6} ${cy}L${cx} ${cy + 6}L${cx - 6} ${cy}Z`,
        fill: CURVE_COLOURS.mark,
      }),
    );
    g.append(
      node(
        'text',
        { x: cx + 9, y: cy - 8, fill: CURVE_COLOURS.mark, 'font-weight': 'bold' },
        k.label,
      ),
    );
    svg.append(g);
  }
  return svg;
}

/** The chart as an SVG file's text. */
export function svgText(svg) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(svg)}\n`;
}

/**
 * The chart as a PNG Blob at `scale` times its size, on a white background.
 * @returns {Promise<Blob>}
 */
export async function svgToPng(svg, scale = 2) {
  const width = Number(svg.getAttribute('width')),
    height = Number(svg.getAttribute('height'));
  const url = URL.createObjectURL(new Blob([svgText(svg)], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    await new Promise((resolve, reject) => {
      img.onload = resolve;
      img.onerror = () => reject(new Error('the browser could not draw the chart'));
      img.src = url;
    });
    const canvas = document.createElement('canvas');
    canvas.width = width * scale;
    canvas.height = height * scale;
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve, reject) =>
      canvas.toBlob(
        (b) => (b ? resolve(b) : reject(new Error('the browser could not encode the PNG'))),
        'image/png',
      ),
    );
  } finally {
    URL.revokeObjectURL(url);
  }
}
