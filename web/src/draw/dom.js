// The one element builder of the page's parts and the element: text through textContent only
// (tokens come from users, files and URLs), attributes through setAttribute, no inline styles (the
// page runs under style-src 'self').

/**
 * h('p', {className: 'x', text: 'hello', id, data: {step: 'dot'}, attrs: {scope: 'row'}}, ...children):
 * an element of the page's document. Children: nodes or strings (strings become text nodes);
 * null, undefined and false are skipped.
 * @param {{className?: string, text?: unknown, id?: string, data?: object, attrs?: object}} [props]
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = String(props.text);
  if (props.id) node.id = props.id;
  for (const [k, v] of Object.entries(props.data ?? {})) node.dataset[k] = String(v);
  for (const [k, v] of Object.entries(props.attrs ?? {})) node.setAttribute(k, String(v));
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return node;
}

/** <tag class="className">text</tag>: h's short form. */
export function el(tag, className, text) {
  return h(tag, { className, text });
}
