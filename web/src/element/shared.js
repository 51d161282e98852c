// What every <mha-attention> element of a page shares: one wasm loader (one core, one full module,
// each started once), the date model, the English model, the constructed stylesheet and the grids'
// label cache. The
// element's entry file (element.js) makes one ElementShared when it defines the element and gives
// it to every element it constructs.
import common from '../../common.css';
import css from '../../element.css';
import experimentsCss from '../../experiments.css';
import { LabelCache } from '../draw/labels.js';
import { WasmModules } from '../compute/wasm_modules.js';
import { modelBytes } from '../modes/trained/model_bytes.js';

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
    /** Script name → the promise of its model and heads file (trainedModel). */
    this.trainedModels = new Map();
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
    return this.trainedModel(
      'date_model.js',
      'MHA_DATE_MODEL',
      (bytes) => new mod.DateModel(bytes),
    );
  }

  /**
   * The English model (english_lm.js → mod.EnglishModel) and its heads' held-out roles (the
   * file's `heads`: web/english_lm_heads.json, or null), loaded once per page (again after a
   * failure).
   * @param {import('../../../cpp/bindings/wasm/mha_wasm').MhaModule} mod the full module
   * @returns {Promise<{model: import('../../../cpp/bindings/wasm/mha_wasm').EnglishModel, heads: object|null, experiments: object|null}>}
   *   experiments: the measurements of its experiments on the heads (experiment="…"), or null
   */
  englishModel(mod) {
    return this.trainedModel(
      'english_lm.js',
      'MHA_ENGLISH_MODEL',
      (bytes) => new mod.EnglishModel(bytes),
    );
  }

  /**
   * A trained model from its classic script (`script`, which sets the global `global`: a script
   * loads from file:// too) made by `make(bytes)`, with its heads file; once per page per script.
   * @template M
   * @param {string} script
   * @param {string} global
   * @param {(bytes: Uint8Array) => M} make
   * @returns {Promise<{model: M, heads: object|null, experiments: object|null}>}
   */
  trainedModel(script, global, make) {
    if (!this.trainedModels.has(script)) {
      const loading = modelBytes({ script, global }, this.modules).then(
        ({ bytes, heads, experiments }) => ({ model: make(bytes), heads, experiments }),
      );
      this.trainedModels.set(script, loading);
      loading.catch(() => this.trainedModels.delete(script));
    }
    return this.trainedModels.get(script);
  }

  /** The element's stylesheet, constructed once (adoptedStyleSheets are not inline styles for CSP); null where unsupported. */
  styleSheet() {
    if (
      !this.sheet &&
      typeof CSSStyleSheet === 'function' &&
      'replaceSync' in CSSStyleSheet.prototype
    ) {
      this.sheet = new CSSStyleSheet();
      this.sheet.replaceSync(`${common}\n${css}\n${experimentsCss}`);
    }
    return this.sheet;
  }
}
