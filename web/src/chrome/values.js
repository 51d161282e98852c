// Values read from the address and the controls: the hash's parameters, whole numbers, booleans,
// and a value quoted back in a message. Pure functions, no imports (the address keys of every part use them).

/** "42", " 42 ", "+42" → 42; "", "4.0", "4e1", "0x10", "abc" → null. */
export function parseInteger(raw) {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : null;
  if (typeof raw !== 'string') return null;
  const s = raw.trim();
  if (!/^[+-]?\d{1,16}$/.test(s)) return null;
  const v = Number(s);
  return Object.is(v, -0) ? 0 : v;
}

/** "1", "true", "yes", "on" → true; "0", "false", "no", "off" → false; else null. */
export function parseBoolean(raw) {
  const s = String(raw).trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off'].includes(s)) return false;
  return null;
}

/** A user value quoted for a message (shortened; the page shows messages as text only). */
export function quoteValue(raw) {
  const chars = Array.from(String(raw));
  return chars.length > 40 ? `${chars.slice(0, 39).join('')}…` : chars.join('');
}

/** The URL hash ("#a=1&b=2", with or without "#") as URLSearchParams; empty when it cannot be read. */
export function hashParams(hash) {
  try {
    return new URLSearchParams(String(hash ?? '').replace(/^#/, ''));
  } catch {
    return new URLSearchParams();
  }
}

/**
 * The address's text under `key` when it has at most `max` characters; else null, with the note
 * "The <what> in the address has N characters (at most <max>); <instead>." added to `notes`.
 * @param {URLSearchParams} p the address's parameters (hashParams)
 * @param {string} key
 * @param {number} max
 * @param {string} what the value as the note names it ('date', 'text')
 * @param {string} instead what the page shows instead
 * @param {string[]} notes
 * @returns {string|null}
 */
export function boundedText(p, key, max, what, instead, notes) {
  const raw = p.get(key);
  if (raw.length <= max) return raw;
  notes.push(
    `The ${what} in the address has ${raw.length} characters (at most ${max}); ${instead}.`,
  );
  return null;
}
