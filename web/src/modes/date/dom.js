// The Date translator's element helper: text nodes only (textContent).

/** <tag class="className">text</tag> of the page's document. */
export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** "cross/1/2" → {kind: 'cross', layer: 1, head: 2} (the keys of headKey and of the address). */
export function parseHeadKey(key) {
  const [kind, layer, head] = key.split('/');
  return { kind, layer: Number(layer), head: Number(head) };
}
