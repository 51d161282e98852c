// Types for mha-attention.js, the <mha-attention> custom element (docs/embedding.md, "The element").
// Importing the package (`import 'mha-attention'`) or loading the script with <script src> defines the
// element; the script exports nothing at run time, so this file declares types only: the attributes
// it reads, the events it sends and the element in document.createElement / querySelector.

/** The attributes the element reads (every value is a string, as in HTML); a change redraws it. */
export interface MhaAttentionAttributes {
  /** A sentence, split into tokens as on the page (1 to 64 tokens). */
  tokens?: string;
  /** The same as `tokens`. */
  text?: string;
  /** d_model, a whole number 1–512 (default 8). */
  'd-model'?: string;
  /** num_heads, a whole number 1–16 dividing d-model (default 2). */
  'num-heads'?: string;
  /** numpy's np.random.seed, 0 – 4294967295 (default 7). */
  seed?: string;
  /** Causal mask: present, or "true"/"false", "1"/"0". */
  causal?: string;
  /** Sinusoidal positions added to X: as `causal`. */
  positional?: string;
  /** A starting point; any other attribute overrides its value. */
  preset?: 'module-08' | 'causal-positions' | 'date-translator' | 'english';
  /** The heads shown, e.g. "0,2" (default every head). */
  heads?: string;
  /** A cell locked when the element appears: "head.query.key", 0-based. */
  cell?: string;
  /** date-translator only: which attention (default cross). */
  kind?: 'encoder_self' | 'decoder_self' | 'cross';
  /** date-translator and english only: one layer, 0-based. */
  layer?: string;
  /** The accessible name of the element's figure. */
  label?: string;
  /** The element's colours (default auto: the host page's declared scheme — a JupyterLab or VS Code theme, a `color-scheme` naming one scheme — else the reader's prefers-color-scheme). */
  theme?: 'auto' | 'light' | 'dark';
  /** grid: the heads side by side; stack: one head per row (default grid). */
  layout?: 'grid' | 'stack';
  /** Every grid's cells in CSS px, a whole number 14–44. */
  'cell-size'?: string;
  /** english only: one experiment on the heads alone (docs/head-experiments.md). */
  experiment?: 'prune' | 'date' | 'sweep' | 'replay';
}

/** An attribute name the element reads. */
export type MhaAttentionAttribute = keyof MhaAttentionAttributes;

/** A cell of the grids: head, query row and key column, 0-based. */
export interface MhaCell {
  head: number;
  row: number;
  col: number;
}

/** The events the element sends (bubbling, composed). */
export interface MhaAttentionEventMap extends HTMLElementEventMap {
  /** After each successful draw. */
  'mha-ready': CustomEvent<undefined>;
  /** After a refused draw: the message the element shows. */
  'mha-error': CustomEvent<{ message: string }>;
  /** When the current cell changes (null: none). */
  'mha-cell': CustomEvent<{ cell: MhaCell | null; locked: boolean }>;
}

/** An <mha-attention> element. */
export interface MhaAttentionElement extends HTMLElement {
  /** data-state: "ready" after a draw, "error" after a refused one. */
  readonly dataset: DOMStringMap & { state?: 'ready' | 'error' };
  addEventListener<K extends keyof MhaAttentionEventMap>(
    type: K,
    listener: (this: MhaAttentionElement, ev: MhaAttentionEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject,
    options?: boolean | AddEventListenerOptions,
  ): void;
}

declare global {
  interface HTMLElementTagNameMap {
    'mha-attention': MhaAttentionElement;
  }
}
