// Saving a figure (figure.js) as a file from the page: the layout measured with a canvas, then
// drawn as SVG text or as a PNG at a chosen scale, and downloaded. Part of dist/figure.js (loaded
// when first used; figure_entry.js) and of the Files panel's bundle.
import {
  drawFigure,
  figureCaption,
  figureFont,
  figureLayout,
  figureSvg,
  headImage,
} from './figure.js';
import { canvasToPng, downloadBlob } from './snapshot.js';

/**
 * The figure of an export (export.js weightsJson's input) as a file's bytes.
 * @param {{data: {weights: Float32Array, heads: number[], queryTokens: string[], keyTokens: string[],
 *          maskedRows?: Uint8Array, config: object}, title: string, link?: string, kind: 'svg'|'png',
 *          scale?: number, ink?: string, background?: string, headNames?: string[], headNotes?: string[],
 *          caption?: string[], columns?: number, panelWidth?: number}} p
 *   link: the view's address (or, for an imported file, its name and shape), printed in the caption;
 *   caption: the settings' lines, written before the link (default: figureCaption of data.config);
 *   headNames, headNotes, columns, panelWidth: as figureLayout takes them
 * @returns {Promise<{blob: Blob, width: number, height: number}>} width, height: the image's pixels
 * @throws {Error} when the shapes disagree or the browser encodes no PNG
 */
export async function figureFile({
  data,
  title,
  link,
  kind,
  scale = 1,
  ink,
  background,
  headNames,
  headNotes,
  caption,
  columns,
  panelWidth,
}) {
  const doc = globalThis.document;
  const makeCanvas = (w, h) => {
    const c = doc.createElement('canvas');
    c.width = w;
    c.height = h;
    return c;
  };
  const mctx = makeCanvas(1, 1).getContext('2d');
  const measure = (text, size, bold) => {
    mctx.font = figureFont(size, bold);
    return mctx.measureText(text).width;
  };
  const fig = figureLayout({
    title,
    captionLines: caption
      ? [...caption, ...(link ? [link] : [])]
      : figureCaption(data.config, link),
    weights: data.weights,
    heads: data.heads,
    headNames,
    headNotes,
    columns,
    panelWidth,
    queryTokens: data.queryTokens,
    keyTokens: data.keyTokens,
    maskedRows: data.maskedRows,
    measure,
    ink,
    background,
  });
  if (kind === 'svg') {
    const svg = figureSvg(fig, {
      imageFor: (head) => headImage(fig, head, makeCanvas).toDataURL('image/png'),
    });
    return {
      blob: new Blob([svg], { type: 'image/svg+xml' }),
      width: fig.width,
      height: fig.height,
    };
  }
  const canvas = makeCanvas(1, 1);
  drawFigure(canvas, fig, scale, makeCanvas);
  return { blob: await canvasToPng(canvas), width: canvas.width, height: canvas.height };
}

/** figureFile, downloaded as `name`. @returns {Promise<{width: number, height: number, bytes: number}>} */
export async function saveFigure(p, name) {
  const { blob, width, height } = await figureFile(p);
  downloadBlob(blob, name);
  return { width, height, bytes: blob.size };
}
