// The one element builder of the page's parts and the element: text through textContent only
// (tokens come from users, files and URLs), no inline styles (the page runs under style-src 'self').

/** <tag class="className">text</tag> of the page's document. */
export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}
