// The page's address: each mode's view as a hash written with history.replaceState (never a new
// history entry). Writing it costs the page's thread a few milliseconds (and Chromium fetches and
// parses the SVG favicon again), so while the reader types it is written once the typing pauses.

/** Milliseconds after the last typed update before its address is written (writeOncePaused). */
export const ADDRESS_PAUSE_MS = 300;

export class Address {
  /**
   * @param {Location} location the page's location
   * @param {History} history the page's history
   */
  constructor(location, history) {
    this.location = location;
    this.history = history;
    /** The timer of an address waiting to be written (writeLater); 0: none. */
    this.timer = 0;
    /** The function that gives that address. */
    this.pending = null;
  }

  /** Writes `#hash` now; an address still waiting to be written is superseded. */
  write(hash) {
    this.drop();
    const next = `#${hash}`;
    if (this.location.hash === next) return;
    try {
      this.history.replaceState(null, '', next);
    } catch {
      // Some embeddings (sandboxed frames) refuse history changes; the page works without.
    }
  }

  /**
   * Writes `hashOf()` `ms` milliseconds from now (a newer call restarts the wait); with
   * `afterFrame`, also after the next frame, so that the frame that paints the view is not
   * delayed by it. A reload, or Back, within the wait finds the address as it was before.
   */
  writeLater(hashOf, ms, { afterFrame = false } = {}) {
    clearTimeout(this.timer);
    this.pending = hashOf;
    const go = () => this.flush();
    this.timer = setTimeout(
      afterFrame ? () => requestAnimationFrame(() => setTimeout(go, 0)) : go,
      ms,
    );
  }

  /** While typing: the address once the typing pauses (ADDRESS_PAUSE_MS, then the painting frame). */
  writeOncePaused(hashOf, pauseMs = ADDRESS_PAUSE_MS) {
    this.writeLater(hashOf, pauseMs, { afterFrame: true });
  }

  /** The address still waiting, written now (also when the page is left); nothing if none waits. */
  flush() {
    const hashOf = this.pending;
    if (!this.timer || !hashOf) return;
    this.timer = 0;
    this.pending = null;
    const hash = hashOf();
    if (hash !== null) this.write(hash);
  }

  /** Drops the address waiting to be written: a newer one supersedes it. */
  drop() {
    clearTimeout(this.timer);
    this.timer = 0;
    this.pending = null;
  }
}
