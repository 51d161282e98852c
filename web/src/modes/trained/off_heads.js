// The address key `off` of every trained-model mode: the heads switched off, as a comma-separated
// list of the mode's head keys (the date model's kind/layer/head, the English model's layer.head).
import { quoteValue } from '../../chrome/values.js';

/**
 * "a, b,a,x" → {off: ['a', 'b'], bad: ['x']}: each item read by `keyOf` (the item's canonical
 * key, or null when it names no head), duplicates dropped, at most `max` kept. The page drops heads
 * the model does not have once it knows the model's size.
 * @param {string} raw the address's value
 * @param {(item: string) => string|null} keyOf
 * @param {number} max
 * @returns {{off: string[], bad: string[]}}
 */
export function parseOffList(raw, keyOf, max) {
  const off = [];
  const bad = [];
  for (const item of String(raw)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const key = keyOf(item);
    if (key === null) bad.push(item);
    else if (!off.includes(key) && off.length < max) off.push(key);
  }
  return { off, bad };
}

/**
 * The note on the items of `off` that name no head: "off=… in the address: not <form>; ignored."
 * @param {string[]} bad
 * @param {string} form the key's form with an example, e.g. 'layer.head (e.g. 0.1)'
 */
export function offNote(bad, form) {
  return `off=${quoteValue(bad.join(','))} in the address: not ${form}; ignored.`;
}
