// The colour legend: the viridis strip for weights 0 → 1, with ticks at 0, 0.5 and 1.
import { legendPixels } from './color.js';
import { FONT_PX } from './layout.js';

const STRIP_W = 200; // CSS px
const STRIP_H = 14;
const PAD_X = 12; // room for the centred "0" and "1" labels

/** Draws the legend into `canvas` (sized for devicePixelRatio). */
export function drawLegend(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const width = STRIP_W + 2 * PAD_X;
  const height = STRIP_H + 6 + FONT_PX + 4;
  canvas.width = Math.ceil(width * dpr);
  canvas.height = Math.ceil(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);

  const strip = document.createElement('canvas');
  strip.width = 256;
  strip.height = 1;
  const sctx = strip.getContext('2d');
  const img = sctx.createImageData(256, 1);
  img.data.set(legendPixels(256));
  sctx.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(strip, PAD_X, 0, STRIP_W, STRIP_H);
  // Where the strip is (CSS px), for tests that read the legend's colour at a weight.
  canvas.dataset.stripX = String(PAD_X);
  canvas.dataset.stripWidth = String(STRIP_W);
  canvas.dataset.stripHeight = String(STRIP_H);

  const ink = getComputedStyle(canvas).getPropertyValue('--label-ink').trim() || '#1a1a1a';
  ctx.strokeStyle = ink;
  ctx.fillStyle = ink;
  ctx.lineWidth = 1;
  ctx.strokeRect(PAD_X - 0.5, -0.5, STRIP_W + 1, STRIP_H + 1);
  ctx.font = `${FONT_PX}px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of [0, 0.5, 1]) {
    const x = Math.round(PAD_X + t * STRIP_W) + (t === 1 ? -0.5 : 0.5);
    ctx.beginPath();
    ctx.moveTo(x, STRIP_H);
    ctx.lineTo(x, STRIP_H + 5);
    ctx.stroke();
    ctx.fillText(String(t), PAD_X + t * STRIP_W, STRIP_H + 7);
  }
}
