// What every <mha-attention> element of a page shares: one wasm loader (one core, one full module,
// each started once), the date model, the English model, the constructed stylesheet and the grids'
// label cache. The
// element's entry file (element.js) makes one ElementShared when it defines the element and gives
// it to every element it constructs.
import common from '../../common.css';
import css from '../../element.css';
import { LabelCache } from '../draw/labels.js';
import { WasmModules } from '../compute/wasm_modules.js';
import { base64ToBytes } from '../compute/bytes.js';

export class ElementShared {
  /**
   * @param {string} base the element script's URL: mha_wasm_core.js, mha_wasm.js, date_model.js,
   *   english_lm.js and the CSS are beside it
   * @param {string} [beside] what those files must be next to, as a missing one's message names it
   */
  constructor(base, beside = 'mha-attention.js') {
    this.base = base;
    /** The loader: one core and one full module for every element of the page. */
    this.modules = new WasmModules({ base, beside });
    /** Label texts, widths and sprites, shared by every element's grids (draw/labels.js). */
    this.labels = new LabelCache();
    this.dateModelPromise = null;
    this.englishModelPromise = null;
    this.sheet = null;
  }

  /**
   * The small attention core (mha_wasm_core.js), for the random-embeddings views: started once per
   * page (wasm_modules.js), shared by every element that needs it.
   */
  core() {
    return this.modules.loadCore();
  }

  /**
   * The full module (mha_wasm.js: DateModel, EnglishModel), for the Date translator and the English
   * model: started once per page, shared by every element that needs it.
   */
  fullModule() {
    return this.modules.loadFullModule();
  }

  /**
   * The date model (date_model.js → mod.DateModel) and its heads' measured roles (the file's
   * `heads`: web/date_model_heads.json, or null), loaded once per page (again after a failure).
   * @param {import('../../../cpp/bindings/wasm/mha_wasm').MhaModule} mod the full module
   * @returns {Promise<{model: import('../../../cpp/bindings/wasm/mha_wasm').DateModel, heads: object|null}>}
   */
  dateModel(mod) {
    if (!this.dateModelPromise) {
      this.dateModelPromise = (async () => {
        if (typeof MHA_DATE_MODEL !== 'object' || !MHA_DATE_MODEL) await this.modules.loadScript('date_model.js');
        if (typeof MHA_DATE_MODEL !== 'object' || !MHA_DATE_MODEL) throw new Error('date_model.js holds no model');
        return { model: new mod.DateModel(base64ToBytes(MHA_DATE_MODEL.safetensors)), heads: MHA_DATE_MODEL.heads ?? null };
      })();
      this.dateModelPromise.catch(() => {
        this.dateModelPromise = null;
      });
    }
    return this.dateModelPromise;
  }

  /**
   * The English model (english_lm.js → mod.EnglishModel) and its heads' held-out roles (the
   * file's `heads`: web/english_lm_heads.json, or null), loaded once per page (again after a
   * failure). A classic script as for the date model: it loads from file:// too.
   * @param {import('../../../cpp/bindings/wasm/mha_wasm').MhaModule} mod the full module
   * @returns {Promise<{model: import('../../../cpp/bindings/wasm/mha_wasm').EnglishModel, heads: object|null}>}
   */
  englishModel(mod) {
    if (!this.englishModelPromise) {
      this.englishModelPromise = (async () => {
        if (typeof MHA_ENGLISH_MODEL !== 'object' || !MHA_ENGLISH_MODEL) await this.modules.loadScript('english_lm.js');
        if (typeof MHA_ENGLISH_MODEL !== 'object' || !MHA_ENGLISH_MODEL) throw new Error('english_lm.js holds no model');
        return { model: new mod.EnglishModel(base64ToBytes(MHA_ENGLISH_MODEL.safetensors)), heads: MHA_ENGLISH_MODEL.heads ?? null };
      })();
      this.englishModelPromise.catch(() => {
        this.englishModelPromise = null;
      });
    }
    return this.englishModelPromise;
  }

  /** The element's stylesheet, constructed once (adoptedStyleSheets are not inline styles for CSP); null where unsupported. */
  styleSheet() {
    if (!this.sheet && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
      this.sheet = new CSSStyleSheet();
      this.sheet.replaceSync(`${common}\n${css}`);
    }
    return this.sheet;
  }
}
