// Bytes of the trained models as the page and the element get them: a classic script's base64
// string (a model bundled for file://, where nothing can be fetched).

/** The bytes of a base64 string (atob exists in browsers and node >= 16). */
export function base64ToBytes(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}
