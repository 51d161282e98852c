// Text of the page's alert and note regions, and small helpers every part writes text with.
// Text nodes only (textContent): messages may quote what the reader typed.

/** A message as a sentence: a full stop added unless it ends with one (or ! ? ”). */
export function sentence(message) {
  return /[.!?”]$/.test(message) ? message : `${message}.`;
}

/** The message of anything thrown: an Error's message, else its string. */
export function errorMessage(e) {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Sets an element's text where it differs: the same text written again still replaces the text
 * node, and the next frame then lays the element out again.
 */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** One <p> per note in `region` (a role="status" region), replacing what it held. */
export function showNotes(region, notes) {
  region.replaceChildren(
    ...notes.map((n) => {
      const p = region.ownerDocument.createElement('p');
      p.textContent = n;
      return p;
    }),
  );
}

/** One more note at the end of `region`. */
export function addNote(region, note) {
  const p = region.ownerDocument.createElement('p');
  p.textContent = note;
  region.append(p);
}
