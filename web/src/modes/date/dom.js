// The Date translator's head keys.

/** "cross/1/2" → {kind: 'cross', layer: 1, head: 2} (the keys of headKey and of the address). */
export function parseHeadKey(key) {
  const [kind, layer, head] = key.split('/');
  return { kind, layer: Number(layer), head: Number(head) };
}
