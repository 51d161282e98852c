// The PNG snapshot of a view (every head shown, with its title, token labels and the colour
// legend) at the screen's devicePixelRatio, and file downloads. Arrangement: export.js
// (snapshotLayout); the grids and the legend are copied from their canvases, which are already
// drawn at devicePixelRatio, so the snapshot is as sharp as the screen.
const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const TITLE_FONT = 'bold 14px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

import { SNAPSHOT_PAD as PAD, elideText, snapshotLayout } from './export.js';

/**
 * @param {{title: string, subtitle?: string, panels: {canvas: HTMLCanvasElement, caption: string}[],
 *          legend: HTMLCanvasElement, legendCaption?: string, ink: string, background: string,
 *          maxWidth?: number}} p  panels: the head canvases (backing store at devicePixelRatio)
 * @returns {HTMLCanvasElement} CSS size × devicePixelRatio pixels
 */
export function composeSnapshot({
  title,
  subtitle = '',
  panels,
  legend,
  legendCaption = 'attention weight',
  ink,
  background,
  maxWidth = 1200,
}) {
  const dpr = window.devicePixelRatio || 1;
  const cssSize = (c) => ({ width: c.width / dpr, height: c.height / dpr });
  const out = document.createElement('canvas');
  const ctx = out.getContext('2d');
  const widthIn = (font) => (s) => {
    ctx.font = font;
    return ctx.measureText(s).width;
  };
  const layout = snapshotLayout({
    titleHeight: subtitle ? 38 : 18,
    captionHeight: 20,
    panels: panels.map((p) => cssSize(p.canvas)),
    legend: cssSize(legend),
    legendCaptionHeight: 18,
    maxWidth: Math.max(maxWidth, ...panels.map((p) => cssSize(p.canvas).width + 2 * PAD)),
    titleWidth: Math.ceil(
      Math.max(widthIn(TITLE_FONT)(title), subtitle ? widthIn(FONT)(subtitle) : 0),
    ),
  });
  const titleText = elideText(title, layout.width - 2 * PAD, widthIn(TITLE_FONT));
  const subtitleText = subtitle ? elideText(subtitle, layout.width - 2 * PAD, widthIn(FONT)) : '';
  out.width = Math.ceil(layout.width * dpr); // resets the context: transform, font, colours
  out.height = Math.ceil(layout.height * dpr);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, layout.width, layout.height);
  ctx.fillStyle = ink;
  ctx.textBaseline = 'top';
  ctx.textAlign = 'left';
  ctx.font = TITLE_FONT;
  ctx.fillText(titleText, layout.title.x, layout.title.y);
  if (subtitleText) {
    ctx.font = FONT;
    ctx.fillText(subtitleText, layout.title.x, layout.title.y + 20);
  }
  ctx.imageSmoothingEnabled = false;
  panels.forEach((p, i) => {
    const at = layout.panels[i];
    const size = cssSize(p.canvas);
    ctx.font = TITLE_FONT;
    ctx.fillStyle = ink;
    ctx.fillText(p.caption, at.x, at.captionY);
    ctx.drawImage(p.canvas, at.x, at.y, size.width, size.height);
  });
  const ls = cssSize(legend);
  ctx.drawImage(legend, layout.legend.x, layout.legend.y, ls.width, ls.height);
  ctx.font = FONT;
  ctx.fillStyle = ink;
  ctx.fillText(legendCaption, layout.legendCaption.x + 12, layout.legendCaption.y + 2);
  out.dataset.cssWidth = String(layout.width);
  out.dataset.cssHeight = String(layout.height);
  return out;
}

/** Saves `blob` as a file called `name` (a temporary link to an object URL, clicked). */
export function downloadBlob(blob, name, doc = document) {
  const url = URL.createObjectURL(blob);
  const a = doc.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  doc.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/** The canvas as a PNG Blob. @returns {Promise<Blob>} @throws {Error} when the browser makes none */
export function canvasToPng(canvas) {
  return new Promise((resolve, reject) => {
    canvas.toBlob(
      (b) => (b ? resolve(b) : reject(new Error('the browser could not encode the PNG'))),
      'image/png',
    );
  });
}
