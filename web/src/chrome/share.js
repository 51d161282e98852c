// Sharing a view: its link, an iframe snippet, an element snippet, and copying text to the
// clipboard with a fallback (a selected text field) where the clipboard is refused — file://
// pages, iframes without clipboard-write permission, older browsers. Snippet builders are pure
// (tested by tests/web/share.test.mjs); copyText needs a DOM.

/** Text for a double-quoted HTML attribute value. */
export function escapeAttribute(value) {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * `href` with its hash replaced by `hash` (with or without "#").
 * @param {string} href the page's address, e.g. location.href
 */
export function linkWithHash(href, hash) {
  const base = String(href).split('#')[0];
  const h = String(hash).replace(/^#/, '');
  return h ? `${base}#${h}` : base;
}

/**
 * The address of a view as the page hands it on (Copy link, Copy embed snippet, a figure's
 * caption): `href` with its hash replaced by `hash` where the page is on a host (http, https);
 * where it is not (a page opened from disk: file://), the page's file name and the hash,
 * "index.html#mode=english", relative to the folder that holds it, so that no copied link, snippet
 * or saved figure names a folder of the author's disk. Put beside a course page's copy of dist/,
 * or with that folder's name before it ("mha/index.html#…"), it opens the same view.
 * @param {string} href the page's address, e.g. location.href
 * @returns {{link: string, relative: boolean}}
 */
export function shareableLink(href, hash) {
  const full = linkWithHash(href, hash);
  let url;
  try {
    url = new URL(full);
  } catch {
    return { link: full, relative: false };
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return { link: full, relative: false };
  const file = url.pathname.split('/').pop() || 'index.html';
  return { link: `${file}${url.search}${url.hash}`, relative: true };
}

/**
 * An iframe snippet showing `src` (a link whose hash has embed=1); allow="clipboard-write" lets
 * its Copy link button reach the clipboard (without it, the link is shown to copy by hand).
 * mha-embed.js (dist/, copied beside the course page: its own origin, for a strict CSP) sizes the
 * iframe (data-mha-embed) to its content; `height` is the height until then, or without it.
 * @param {string} src @param {{title?: string, height?: number}} [options]
 */
export function iframeSnippet(
  src,
  { title = 'Multi-head attention weights (mha-lab)', height = 560 } = {},
) {
  return (
    `<iframe src="${escapeAttribute(src)}" title="${escapeAttribute(title)}" ` +
    `width="100%" height="${Math.round(height)}" loading="lazy" allow="clipboard-write" data-mha-embed></iframe>` +
    '<script src="mha-embed.js"></script>'
  );
}

/** Attribute names of <mha-attention> for the page's settings (see docs/embedding.md). */
/** @type {ReadonlyArray<readonly [string, string]>} */
const ELEMENT_ATTRIBUTES = Object.freeze(
  [
    ['text', 'tokens'],
    ['d_model', 'd-model'],
    ['num_heads', 'num-heads'],
    ['seed', 'seed'],
  ].map((pair) => Object.freeze(/** @type {[string, string]} */ (pair))),
);

/**
 * The <mha-attention> element (and its script tag) for a state of the page.
 * @param {{text: string, d_model: number, num_heads: number, seed: number, causal: boolean,
 *          positional: boolean}} state
 * @param {{scriptSrc?: string, preset?: string|null, cell?: {head, row, col}|null}} [options]
 */
export function elementSnippet(
  state,
  { scriptSrc = 'mha-attention.js', preset = null, cell = null } = {},
) {
  const attrs = [];
  if (preset) attrs.push(`preset="${escapeAttribute(preset)}"`);
  else {
    for (const [key, name] of ELEMENT_ATTRIBUTES)
      attrs.push(`${name}="${escapeAttribute(state[key])}"`);
    if (state.causal) attrs.push('causal');
    if (state.positional) attrs.push('positional');
  }
  if (cell) attrs.push(`cell="${cell.head}.${cell.row}.${cell.col}"`);
  return `<script src="${escapeAttribute(scriptSrc)}"></script>\n<mha-attention ${attrs.join(' ')}></mha-attention>`;
}

/**
 * Copies `text`: the async clipboard API when the browser allows it; otherwise the text goes
 * into `field` (a text input or textarea, shown and selected) for the reader to copy by hand.
 * @param {string} text
 * @param {HTMLInputElement|HTMLTextAreaElement} field the fallback field (may be hidden)
 * @returns {Promise<'copied'|'manual'>}
 */
export async function copyText(text, field) {
  field.value = text;
  try {
    if (!navigator.clipboard?.writeText) throw new Error('no clipboard API');
    await navigator.clipboard.writeText(text);
    field.closest('[data-fallback]')?.setAttribute('hidden', '');
    return 'copied';
  } catch {
    field.closest('[data-fallback]')?.removeAttribute('hidden');
    field.focus();
    field.select();
    return 'manual';
  }
}
