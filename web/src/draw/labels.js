// The grids' row and column labels: their text (truncated), their widths, and the label sprites
// that every head with the same labels copies from. A LabelCache holds all three; the page makes
// one (main.js) and gives it to every grid, so the heads of a view, the Date translator's grids
// and the explain panels' grids share them; each page of <mha-attention> elements has one too.
import { truncateLabel } from './format.js';
import { FONT_PX, LABEL_GAP } from './layout.js';

const LABEL_CHARS = 12;
export const FONT = `${FONT_PX}px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif`;
export const FONT_BOLD = `bold ${FONT}`;
/** Label widths kept (by font and text) before they are dropped whole. */
const MAX_MEASURED = 8192;
/** Label geometries with a sprite canvas of their own, per kind (all dropped for a new one past that). */
const RECENT_GEOMETRIES = 4;

export class LabelCache {
  constructor() {
    /** The label set of a token array ({texts}, and its widest label per font): every head is given the same array. */
    this.sets = new WeakMap();
    /**
     * Label widths, CSS px, by font and text: a keystroke makes a new token array (and label set)
     * but changes one label, so each text is measured once (measuring every label in two fonts on
     * every update shows in a profile of typing). Dropped whole past MAX_MEASURED.
     */
    this.measured = new Map();
    /** The 2D context the widths are measured with (made on first use). */
    this.scratch = null;
    /** Per kind ('row', 'col'): geometry → {canvas, texts (the labels it holds)} (see sprite). */
    this.sprites = { row: new Map(), col: new Map() };
  }

  /** The labels of `tokens` (truncated), kept per token array. */
  labelSet(tokens) {
    let set = this.sets.get(tokens);
    if (!set)
      this.sets.set(tokens, (set = { texts: tokens.map((t) => truncateLabel(t, LABEL_CHARS)) }));
    return set;
  }

  /** The widest label of `set` in `font`, CSS px (once per set). */
  widest(set, font) {
    const { measured } = this;
    const scratch = (this.scratch ??= document.createElement('canvas').getContext('2d'));
    scratch.font = font;
    if (measured.size > MAX_MEASURED) measured.clear();
    return (set[font] ??= set.texts.reduce((w, t) => {
      const key = font + t;
      if (!measured.has(key)) measured.set(key, scratch.measureText(t).width);
      return Math.max(w, measured.get(key));
    }, 0));
  }

  /**
   * Every label of `set` as row labels (kind 'row': rowLabel) or column labels ('col':
   * columnLabel) of `layout`, in `ink`, at `dpr`, in the top-left of a sprite canvas (transparent
   * beyond its label band): drawn once and copied into every head's label canvas (rather than 8
   * heads drawing the same 128 labels each). Call it again before each copy: the canvas is shared.
   * One canvas is kept per label geometry (cell, band, dpr, ink) and kind, for up to
   * RECENT_GEOMETRIES geometries. It holds the labels it was last asked for; asked for other
   * labels, it draws only the ones that differ, in place (a keystroke changes one token, or adds
   * one). A token count going back and forth across a cell-size step (63 tokens: 19 px cells,
   * 64: 18 px) alternates two geometries, each with its canvas (a new sprite canvas per update,
   * drawn whole, costs most in the new canvas's first use). Each label is drawn clipped to its
   * slot (labelInSlot), so the result is the same pixels as drawing them all, in every script (at
   * 12 px, "Å", "É" and "Ç" reach 1-2 px into the next slot, and stacked diacritics such as "Ẫ"
   * further: they would be left behind when only their slot was redrawn).
   */
  sprite(set, kind, layout, dpr, ink) {
    const band = kind === 'row' ? layout.originX : `${layout.originY}|${layout.rotateColumns}`;
    const geometry = `${layout.cell}|${band}|${dpr}|${ink}`;
    const recent = this.sprites[kind];
    let s = recent.get(geometry);
    if (!s) {
      if (recent.size >= RECENT_GEOMETRIES) recent.clear();
      // (Made empty: the default 300 x 150 store would be kept, without room, by the first set.)
      recent.set(
        geometry,
        (s = { canvas: Object.assign(document.createElement('canvas'), { width: 0, height: 0 }) }),
      );
    }
    if (s.texts === set.texts) return s.canvas;
    const { canvas } = s;
    // The store only grows (growing clears it, and every label is drawn again): the top-left band
    // is this set's; slots past it are blank. Along the labels it grows with room for a quarter
    // more (spriteRoom): grown to the exact length, it would be cleared and every label drawn
    // again on every keystroke that adds a token.
    const long = Math.ceil(set.texts.length * layout.cell * dpr);
    const bw = kind === 'row' ? Math.ceil(layout.originX * dpr) : long;
    const bh = kind === 'row' ? long : Math.ceil(layout.originY * dpr);
    if (canvas.width < bw || canvas.height < bh) {
      canvas.width = Math.max(canvas.width, kind === 'row' ? bw : spriteRoom(bw));
      canvas.height = Math.max(canvas.height, kind === 'row' ? spriteRoom(bh) : bh);
      s.texts = null;
    }
    const ctx = canvas.getContext('2d');
    const last = s.texts;
    if (!last) {
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, canvas.width, canvas.height);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = ink;
    // Each slot whose label changed is cleared, also the slots past this set's labels.
    for (let i = 0; i < Math.max(set.texts.length, last ? last.length : 0); i++) {
      const t = set.texts[i];
      if (last && last[i] === t) continue;
      if (last && i < last.length) ctx.clearRect(...labelSlot(kind, layout, i));
      if (t !== undefined) labelInSlot(ctx, kind, t, i, layout);
    }
    s.texts = set.texts;
    return canvas;
  }
}

/** A sprite's length along its labels for `need` device px: a quarter more, in steps of 64. */
const spriteRoom = (need) => Math.ceil((need * 1.25) / 64) * 64;

/** The box (x, y, w, h; CSS px) of row label i (kind 'row') or column label i ('col'). */
export function labelSlot(kind, { cell, originX, originY }, i) {
  return kind === 'row' ? [0, i * cell, originX, cell] : [i * cell, 0, cell, originY];
}

/** Row (kind 'row') or column ('col') label i of `layout`, clipped to its slot (labelSlot). */
export function labelInSlot(ctx, kind, text, i, layout, font = FONT) {
  ctx.save();
  ctx.beginPath();
  ctx.rect(...labelSlot(kind, layout, i));
  ctx.clip();
  (kind === 'row' ? rowLabel : columnLabel)(ctx, text, i, layout, font);
  ctx.restore();
}

/** Row label i, right-aligned against the grid, in a canvas whose top is the grid's. */
function rowLabel(ctx, text, i, { cell, originX }, font = FONT) {
  ctx.font = font;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  ctx.fillText(text, originX - LABEL_GAP, (i + 0.5) * cell);
}

/** Column label j (across when labels fit, else turned to read upwards), left edge = the grid's. */
function columnLabel(ctx, text, j, { cell, originY, rotateColumns }, font = FONT) {
  ctx.font = font;
  const x = (j + 0.5) * cell;
  if (rotateColumns) {
    ctx.save();
    ctx.translate(x, originY - LABEL_GAP);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillText(text, 0, 0);
    ctx.restore();
  } else {
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    ctx.fillText(text, x, originY - LABEL_GAP);
  }
}
