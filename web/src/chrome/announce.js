// What a screen reader hears when the current cell changes: one polite live region per view.
import { formatWeight } from '../draw/format.js';

/**
 * The announcement of one cell, e.g. "head 2, query 'cat', key 'sat': 0.424" (head index
 * 0-based as in the grids' titles; the weight with 3 decimals as in the tables).
 * @param {number} head @param {string} query token @param {string} key token @param {number} weight
 * @param {{masked?: boolean, lock?: 'locked'|'unlocked'}} [extra]
 */
export function announceText(head, query, key, weight, { masked = false, lock } = {}) {
  let s = `head ${head}, query '${query}', key '${key}': ${formatWeight(weight)}`;
  if (masked) s += ' (every key of this row is masked)';
  if (lock) s += `, ${lock}`;
  return s;
}

/**
 * A visually hidden aria-live="polite" region (created inside `parent`) and a function that
 * writes to it. Text only (textContent): tokens come from users and URLs.
 * @returns {{region: HTMLElement, say: (text: string) => void}}
 */
export function createAnnouncer(parent, doc = document) {
  const region = doc.createElement('p');
  region.className = 'visually-hidden announce';
  region.setAttribute('aria-live', 'polite');
  region.setAttribute('aria-atomic', 'true');
  parent.append(region);
  return {
    region,
    say(text) {
      region.textContent = text;
    },
  };
}
