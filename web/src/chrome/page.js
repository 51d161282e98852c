// The page's chrome: the mode tabs, the address (which mode, #embed), the core's status, the share
// bar (copy link, copy embed snippet, open the full page) and the export buttons. The modes
// themselves are given to it (main.js); it knows them only by their interface:
//
//   mode.id            'random', 'date', 'english': the address's mode=… and the tab's data-mode
//   mode.panel         its tab panel; mode.shareSlot: where the share bar goes while it is shown;
//                      mode.skipTarget: the skip link's target, a selector (read when the mode is
//                      shown and when the link is focused or followed: a mode bundled apart knows
//                      its own once loaded); mode.exports: whether the export
//                      buttons apply (mode.exportData(), mode.snapshotParts()); 'figure': Save PNG
//                      and Save SVG only, of the figure mode.figureParts() describes
//   mode.mount(hash, notes)  shows the view of an address (notes: what the page's own reading of
//                      it had to say); mode.resume(): shown again by its tab, settings as they were
//   mode.unmount()     hidden (another tab)
//   mode.hash({embed}) the address of the view on screen (without "#"), or null before the first
//   mode.setEmbed(on)  (optional) the page switched to or from the minimal chrome
import { embedOf, parseMode } from './address_keys.js';
import { copyText, iframeSnippet, linkWithHash, shareableLink } from './share.js';
import { exportFileName, weightsCsv, weightsJson } from './export.js';
import { downloadBlob } from './snapshot.js';

/** The figure export's script (figure_entry.js), added on the first Save PNG / Save SVG. */
const FIGURE_SCRIPT = 'figure.js';
import { errorMessage } from './alerts.js';

export class Page {
  /**
   * @param {Document} doc the page
   * @param {object} p
   * @param {object[]} p.modes the modes, the first one the default (no mode in the address)
   * @param {object} p.address the page's address (address.js)
   * @param {(on: boolean) => void} [p.onEmbed] the page switched to or from the minimal chrome
   * @param {(name: string) => Promise<void>} [p.loadScript] adds a classic script of dist/ once
   *   (wasm_modules.js loadScript): the figure export's
   */
  constructor(doc, { modes, address, onEmbed = () => {}, loadScript }) {
    const $ = (id) => doc.getElementById(id);
    this.doc = doc;
    this.modes = new Map(modes.map((m) => [m.id, m]));
    this.defaultMode = modes[0];
    this.address = address;
    this.onEmbed = onEmbed;
    this.loadScript = loadScript;
    this.els = {
      tabs: /** @type {HTMLElement[]} */ ([...doc.querySelectorAll('.mode-tab')]),
      skipLink: /** @type {HTMLAnchorElement} */ (doc.querySelector('.skip-link')),
      share: $('share'),
      copyLink: $('copy-link'),
      copyEmbed: $('copy-embed'),
      exportBar: $('export'),
      exportPng: $('export-png'),
      exportSvg: $('export-svg'),
      exportScale: /** @type {HTMLSelectElement} */ ($('export-scale')),
      exportCsv: $('export-csv'),
      exportJson: $('export-json'),
      shareStatus: $('share-status'),
      shareText: /** @type {HTMLTextAreaElement} */ ($('share-text')),
      fullPage: /** @type {HTMLAnchorElement} */ ($('full-page-link')),
    };
    /** The mode shown. */
    this.mode = this.defaultMode;
    /** Whether the page shows the minimal chrome (#embed: the grids, the legend and the readout). */
    this.embed = false;
  }

  /** Listens to the tabs, the share bar and the address; shows the mode of the current address. */
  start() {
    this.wireTabs();
    this.wireSkipLink();
    this.wireShare();
    const win = this.doc.defaultView;
    win.addEventListener('hashchange', () => this.applyHash(win.location.hash));
    // Leaving the page (closing the tab, going elsewhere) while an address waits to be written:
    // the history entry and a restored session keep the text last typed.
    win.addEventListener('pagehide', () => this.address.flush());
    return this.applyHash(win.location.hash);
  }

  /** Shows the view of address `hash`: its mode, embed or not, and that mode's settings. */
  applyHash(hash) {
    // The address navigated to wins over one the typing left waiting (which would otherwise be
    // written over it, for the view still on screen, while the new view is computed).
    this.address.drop();
    const wanted = parseMode(hash);
    this.setEmbed(embedOf(hash));
    const mode = this.modes.get(wanted.mode) ?? this.defaultMode;
    this.show(mode);
    return mode.mount(hash, wanted.notes);
  }

  /** Shows one mode's panel and marks its tab (tabs pattern: the selected tab is the Tab stop). */
  show(next) {
    const previous = this.mode;
    this.mode = next;
    for (const tab of this.els.tabs) {
      const on = tab.dataset.mode === next.id;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
    }
    for (const mode of this.modes.values()) mode.panel.hidden = mode !== next;
    this.els.exportBar.hidden = !next.exports;
    this.els.exportCsv.hidden = this.els.exportJson.hidden = next.exports !== true;
    // A message about another mode's view (a save, a copied link) goes with it.
    if (next !== previous) this.shareStatus('');
    // One share bar, under the grids of the mode shown.
    next.shareSlot.append(this.els.share);
    this.updateSkipLink();
    for (const mode of this.modes.values()) if (mode !== next) mode.unmount();
    return previous;
  }

  /** Points the skip link at the grids of the mode shown. */
  updateSkipLink() {
    this.els.skipLink.href = this.mode.skipTarget;
  }

  /**
   * The skip link follows the mode shown (a mode bundled apart names its grids once loaded) and
   * moves the focus there itself: followed as a fragment link, it would replace the address, and
   * the page would show that address's view (the default one) instead of the one on screen.
   */
  wireSkipLink() {
    const { skipLink } = this.els;
    skipLink.addEventListener('focus', () => this.updateSkipLink());
    skipLink.addEventListener('click', (e) => {
      e.preventDefault();
      this.updateSkipLink();
      this.doc.querySelector(this.mode.skipTarget)?.focus();
    });
  }

  /** A tab was chosen: switch, keeping each mode's own settings. */
  switchMode(id) {
    const next = this.modes.get(id);
    if (!next || next === this.mode) return;
    this.show(next);
    next.resume();
  }

  wireTabs() {
    const { tabs } = this.els;
    tabs.forEach((tab, i) => {
      tab.addEventListener('click', () => this.switchMode(tab.dataset.mode));
      tab.addEventListener('keydown', (e) => {
        const last = tabs.length - 1;
        const to = {
          ArrowRight: i === last ? 0 : i + 1,
          ArrowLeft: i === 0 ? last : i - 1,
          Home: 0,
          End: last,
        }[e.key];
        if (to === undefined) return;
        e.preventDefault();
        tabs[to].focus();
        this.switchMode(tabs[to].dataset.mode);
      });
    });
  }

  /** #embed: the grids, the legend and the readout only (for iframes in course pages). */
  setEmbed(on) {
    this.embed = on;
    const root = this.doc.documentElement;
    root.classList.toggle('embed', on);
    // The page's title stays for screen readers (one h1 per page), out of sight.
    this.doc.querySelector('h1').classList.toggle('visually-hidden', on);
    if (on) this.els.fullPage.href = linkWithHash(this.doc.defaultView.location.href, '');
    this.onEmbed(on);
  }

  /** The address of the view on screen, with or without the minimal chrome (to follow). */
  currentLink({ embed }) {
    const hash = this.mode.hash({ embed }) ?? '';
    return linkWithHash(this.doc.defaultView.location.href, hash);
  }

  /**
   * The same address as it is handed on (share.js shareableLink): relative, "index.html#…",
   * where the page is opened from disk.
   */
  sharedLink({ embed }) {
    return shareableLink(this.doc.defaultView.location.href, this.mode.hash({ embed }) ?? '');
  }

  shareStatus(text) {
    this.els.shareStatus.textContent = text;
  }

  /** Copy link / Copy embed snippet: the clipboard, or a selected field to copy by hand. */
  async share(what) {
    const { link, relative } = this.sharedLink({ embed: what === 'link' ? this.embed : true });
    const text = what === 'link' ? link : iframeSnippet(link);
    const how = await copyText(text, this.els.shareText);
    const label = what === 'link' ? 'Link' : 'Embed snippet';
    this.shareStatus(
      (how === 'copied'
        ? `${label} copied to the clipboard.`
        : `${label} selected in the field below: the browser refused the clipboard here, press Ctrl+C (⌘C) to copy.`) +
        (relative
          ? ` The page is opened from disk, so the link is relative (${link.split('#')[0]}#…): it opens this view ` +
            'from a page in the same folder; put the folder on a static host for a link anyone can open (docs/embedding.md).'
          : ''),
    );
  }

  /**
   * Saves the mode's grids as a CSV or JSON file, or as a figure (figure.js: SVG, or PNG at the
   * scale chosen) whose caption holds the settings and this view's link. A mode of figures only
   * gives the figure's parts itself (figureParts: data, title, caption, headNames, headNotes,
   * columns, and the file name's stem).
   */
  async exportView(kind) {
    const { mode } = this;
    try {
      const own = mode.exports === 'figure' ? mode.figureParts() : null;
      const data = own ? own.data : mode.exports ? mode.exportData() : null;
      if (!data) return;
      const name = own ? `${own.stem}.${kind}` : exportFileName(data.config, kind);
      if (kind === 'csv') {
        downloadBlob(new Blob([weightsCsv(data)], { type: 'text/csv' }), name);
      } else if (kind === 'json') {
        downloadBlob(
          new Blob([`${JSON.stringify(weightsJson(data), null, 1)}\n`], {
            type: 'application/json',
          }),
          name,
        );
      } else {
        if (!this.loadScript) throw new Error('this page has no figure export');
        await this.loadScript(FIGURE_SCRIPT);
        const fig = globalThis.mhaFigure;
        if (typeof fig?.saveFigure !== 'function')
          throw new Error(`${FIGURE_SCRIPT} loaded but defines no figure export: rebuild the page`);
        const style = getComputedStyle(this.doc.body);
        const scale = kind === 'png' ? Number(this.els.exportScale?.value || 1) : 1;
        const text = data.config.text;
        const saved = await fig.saveFigure(
          {
            title: text ? `Multi-head attention: "${text}"` : 'Multi-head attention weights',
            ...own,
            data,
            kind,
            scale,
            link: this.sharedLink({ embed: false }).link,
            ink: style.color || '#1a1a1a',
            background:
              style.backgroundColor === 'rgba(0, 0, 0, 0)' ? '#ffffff' : style.backgroundColor,
          },
          kind === 'png' && scale !== 1 ? name.replace(/\.png$/, `-${scale}x.png`) : name,
        );
        this.shareStatus(
          `Saved ${kind === 'png' && scale !== 1 ? name.replace(/\.png$/, `-${scale}x.png`) : name} (${saved.width} × ${saved.height}${kind === 'svg' ? ' px' : ' pixels'}, ${saved.bytes} bytes).`,
        );
        return;
      }
      this.shareStatus(`Saved ${name}.`);
    } catch (e) {
      this.shareStatus(`Could not export: ${errorMessage(e)}`);
    }
  }

  wireShare() {
    const { els } = this;
    els.copyLink.addEventListener('click', () => this.share('link'));
    // In an iframe (#embed): the same view with the full page around it, in a new tab.
    const toFullPage = () => {
      els.fullPage.href = this.currentLink({ embed: false });
    };
    els.fullPage.addEventListener('click', toFullPage);
    els.fullPage.addEventListener('focus', toFullPage);
    els.fullPage.addEventListener('pointerenter', toFullPage);
    els.copyEmbed.addEventListener('click', () => this.share('embed'));
    els.exportPng.addEventListener('click', () => this.exportView('png'));
    els.exportSvg?.addEventListener('click', () => this.exportView('svg'));
    els.exportCsv.addEventListener('click', () => this.exportView('csv'));
    els.exportJson.addEventListener('click', () => this.exportView('json'));
  }
}
