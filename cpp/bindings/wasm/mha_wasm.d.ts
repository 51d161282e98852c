// The JavaScript API of the two wasm modules, for the TypeScript compiler: build/wasm/mha_wasm_core.js
// (factory createMhaCore: the attention core) and build/wasm/mha_wasm.js (factory createMhaModule:
// the core plus the trained models, head patterns, explanations and file loaders). The Embind code
// is in this folder (bindings*.cpp, explain_bindings.cpp, load_bindings.cpp); the prose, with every
// error message, is docs/js-api.md. tests/js/declaration.test.mjs reads this file with the
// TypeScript compiler and checks it against both built modules: every name declared here exists
// with the kind declared, and every export the modules register is declared here.
//
// Shape legend: n = query tokens, m = key/value tokens, d = d_model, h = num_heads,
// d_head = d / h, kdim / vdim = widths of the key / value inputs. Every matrix is a flat, row-major
// array; a stack (h, n, m) puts head i's (n, m) matrix at offset i*n*m.

/** Numbers in: a Float32Array, a Float64Array or a plain array (the core computes in float32). */
export type Floats = Float32Array | Float64Array | ArrayLike<number>;

/**
 * A mask, PyTorch polarity: a Uint8Array, an Int8Array or an array of booleans is a boolean mask
 * (non-zero = may not attend); any other array is additive (added to the scaled scores; -Infinity
 * masks).
 */
export type Mask = Uint8Array | Int8Array | boolean[] | Floats;

/** The bytes of a whole file: a Uint8Array or an ArrayBuffer. */
export type Bytes = Uint8Array | ArrayBuffer;

/** What every Embind object has: it lives in wasm memory until delete() (no garbage collection). */
export interface EmbindObject {
  /** Frees the object's wasm memory; the object is unusable afterwards. */
  delete(): void;
  /** Whether delete() has been called. */
  isDeleted(): boolean;
}

// ---------------------------------------------------------------------------------------------
// The attention core (both modules)

/** The layer's inputs: layer.forward's request (forwardViews: without keep_intermediates). */
export interface ForwardInputs {
  /** Query tokens. */
  n: number;
  /** (n, d) */
  query: Floats;
  /** Key/value tokens (cross-attention); default n. */
  m?: number;
  /** (m, kdim); default: self-attention on query. */
  key?: Floats;
  /** (m, vdim); default: self-attention on query. */
  value?: Floats;
  /** (n, m) or per head (h, n, m). */
  attn_mask?: Mask | null;
  /** (m): boolean (true = ignore that key) or additive. */
  key_padding_mask?: Mask | null;
  /** Query i attends to keys j <= i only; combined with attn_mask. */
  is_causal?: boolean | null;
  /** Default true; false leaves out q, k, v, scores, head_outputs. */
  keep_intermediates?: boolean | null;
  /** Default false; true computes the attention weights only (no output, v, head_outputs). */
  weights_only?: boolean | null;
  /** (h): non-zero switches that head's output off before out_proj. */
  ablated_heads?: ArrayLike<number | boolean> | null;
}

/** A layer's configuration and weights, PyTorch's names and layout (nn.MultiheadAttention). */
export interface LayerSpec {
  d_model: number;
  num_heads: number;
  /** Width of the key input; default d_model. */
  kdim?: number;
  /** Width of the value input; default d_model. */
  vdim?: number;
  /** (3d, d): rows q, then k, then v. Or q/k/v_proj_weight. */
  in_proj_weight?: Floats;
  /** (d, d) */
  q_proj_weight?: Floats;
  /** (d, kdim) */
  k_proj_weight?: Floats;
  /** (d, vdim) */
  v_proj_weight?: Floats;
  /** (3d) */
  in_proj_bias?: Floats;
  /** (d, d) */
  out_proj_weight: Floats;
  /** (d) */
  out_proj_bias?: Floats;
}

/** mod.forward's request: a layer's spec and its inputs in one object. */
export interface ForwardRequest extends LayerSpec, ForwardInputs {}

/** A forward's result; every array a copy owned by JS. */
export interface ForwardResult {
  n: number;
  m: number;
  d_model: number;
  num_heads: number;
  d_head: number;
  /** (n, d): concat(Y_1..Y_h) W_out^T + b_out; absent with weights_only. */
  output?: Float32Array;
  /** (h, n, m), never averaged; each row sums to 1, or is all 0 when every key is masked. */
  attn_weights: Float32Array;
  /** (h, n): 1 where a head's query row had every key masked. */
  fully_masked_rows: Uint8Array;
  /** (n, d), projected; only with intermediates. */
  q?: Float32Array;
  /** (m, d) */
  k?: Float32Array;
  /** (m, d); absent with weights_only. */
  v?: Float32Array;
  /** (h, n, m): the logits the softmax sees (-Infinity where masked). */
  scores?: Float32Array;
  /** (n, d): concat(Y_1..Y_h) before out_proj; absent with weights_only. */
  head_outputs?: Float32Array;
}

/**
 * layer.forwardViews's result: output (absent with weights_only), attn_weights and
 * fully_masked_rows are views into wasm memory, valid until the next call into the module.
 */
export type ForwardViewsResult = Pick<
  ForwardResult,
  'n' | 'm' | 'd_model' | 'num_heads' | 'd_head' | 'output' | 'attn_weights' | 'fully_masked_rows'
>;

/** A layer whose weights stay in wasm memory (validated once): new mod.MultiheadAttention(spec). */
export interface MultiheadAttention extends EmbindObject {
  /** One forward on the kept weights; arrays in the result are copies. */
  forward(inputs: ForwardInputs): ForwardResult;
  /** The same without copies (inputs as forward's but keep_intermediates): views, read at once. */
  forwardViews(inputs: Omit<ForwardInputs, 'keep_intermediates'>): ForwardViewsResult;
  /** As PyTorch's sum(p.numel() for p in layer.parameters()). */
  parameterCount(): number;
  readonly d_model: number;
  readonly num_heads: number;
}

/** The MultiheadAttention class of a module. */
export interface MultiheadAttentionClass {
  new (spec: LayerSpec): MultiheadAttention;
  readonly prototype: MultiheadAttention;
}

/** 'float64' (the course's numbers), 'float32' (the fast path) or 'auto' (float64 up to experimentFloat64MaxWork). */
export type Precision = 'float64' | 'float32' | 'auto';

/** mod.numpyExperiment's request (keys: kExperimentKeys, cpp/formats/mha/request_schema.hpp). */
export interface ExperimentRequest {
  /** An integer in [0, 2^32 - 1], as numpy accepts. */
  seed: number;
  tokens: number;
  d_model: number;
  num_heads: number;
  precision?: Precision | null;
  /** Adds the sinusoidal positional encoding to X. */
  positional?: boolean | null;
  is_causal?: boolean | null;
  /** (n, n) or (h, n, n). */
  attn_mask?: Mask | null;
  /** (n) */
  key_padding_mask?: Mask | null;
  keep_intermediates?: boolean | null;
  weights_only?: boolean | null;
  /** (h) */
  ablated_heads?: ArrayLike<number | boolean> | null;
  /** Default true; false leaves out x, in_proj_weight, out_proj_weight. */
  return_parameters?: boolean | null;
  /** The grids' road only: the first head returned. */
  first_head?: number | null;
  /** The grids' road only: how many heads are returned. */
  head_count?: number | null;
  /** A Float32Array of exactly as many floats as the weights returned: takes them. */
  attn_weights_into?: Float32Array | null;
}

/** numpyExperiment's result: forward's plus what the experiment drew. */
export interface ExperimentResult extends ForwardResult {
  /** What it was computed in. */
  precision: 'float64' | 'float32';
  /** (tokens, d), as used; absent with return_parameters: false or on the grids' road. */
  x?: Float32Array;
  /** (3d, d): [Wq^T; Wk^T; Wv^T]. */
  in_proj_weight?: Float32Array;
  /** (d, d): Wo^T. */
  out_proj_weight?: Float32Array;
  parameter_count: number;
  /** Only when first_head / head_count were asked for. */
  first_head?: number;
  /** Only when first_head / head_count were asked for. */
  head_count?: number;
}

/** The sizes beyond which a request fails before any allocation. */
export interface Limits {
  max_tokens: number;
  max_d_model: number;
  max_num_heads: number;
  max_weight_entries: number;
}

/** Bytes in use, for leak checks and diagnostics. */
export interface MemoryStats {
  malloc_in_use_bytes: number;
  /** numpyExperiment's kept draws (8 bytes each). */
  numpy_draws_bytes: number;
  /** Size of wasm linear memory (it only grows). */
  wasm_memory_bytes: number;
}

/** A sliding-window mask's request: query i may attend key j iff |i - j| <= window. */
export interface WindowMaskRequest {
  n: number;
  /** Default n. */
  m?: number;
  window: number;
  is_causal?: boolean | null;
}

/** The attention core: what mha_wasm_core.js's module holds (and mha_wasm.js's with it). */
export interface MhaCoreModule {
  /** One forward pass of multi-head attention (PyTorch semantics). */
  forward(request: ForwardRequest): ForwardResult;
  /** Module 08's seeded numpy program, reproduced exactly. */
  numpyExperiment(request: ExperimentRequest): ExperimentResult;
  /** Multiply-adds of one numpyExperiment forward, n*d*(4d + 2n). */
  experimentWork(request: { tokens: number; d_model: number }): number;
  /** precision 'auto' computes in float64 up to this many multiply-adds. */
  readonly experimentFloat64MaxWork: number;
  /** PyTorch's parameter count of nn.MultiheadAttention: 4d^2 (+4d with bias). */
  parameterCount(request: {
    d_model: number;
    num_heads: number;
    kdim?: number;
    vdim?: number;
    bias?: boolean;
  }): number;
  /** np.random.seed(seed); np.random.randn(count). */
  randn(seed: number, count: number): Float64Array;
  /** (n, d): the sinusoidal positional encoding (Vaswani et al. 2017 §3.5). */
  sinusoidalPositionalEncoding(n: number, d_model: number): Float32Array;
  /** (n, m) boolean attn_mask of the sliding window. */
  windowMask(request: WindowMaskRequest): Uint8Array;
  memoryStats(): MemoryStats;
  readonly limits: Limits;
  /** The project version. */
  readonly version: string;
  /** Which GEMM micro-kernel runs: 'relaxed_madd' where relaxed SIMD validates, else 'simd128'. */
  readonly gemmKernel: 'relaxed_madd' | 'simd128';
  /** Set only when the engine validated the relaxed kernel but installing it failed. */
  readonly gemmKernelError?: string;
  MultiheadAttention: MultiheadAttentionClass;
}

// ---------------------------------------------------------------------------------------------
// The trained models (mha_wasm.js only)

/** The attention of one layer of a trained model, as DateModel.translate and EnglishModel.run give it. */
export interface AttentionLayer {
  /** Which attention: a decoder-only model's is 'self'. */
  kind: 'self' | 'encoder_self' | 'decoder_self' | 'cross';
  layer: number;
  num_heads: number;
  queries: number;
  keys: number;
  /** (num_heads, queries, keys) */
  weights: Float32Array;
}

/** A date-model head to switch off. */
export interface DateHead {
  kind: 'encoder_self' | 'decoder_self' | 'cross';
  layer: number;
  head: number;
}

/** DateModel.translate's result (S = input characters, T = decoder steps, V = vocabulary). */
export interface DateTranslation {
  input: string;
  /** The generated characters without <eos>, e.g. "2026-11-30". */
  output: string;
  /** (S): one per input character. */
  source_tokens: string[];
  /** The generated tokens, then "<eos>" if it was produced. */
  output_tokens: string[];
  produced_eos: boolean;
  num_heads: number;
  num_encoder_layers: number;
  num_decoder_layers: number;
  /** S */
  source_length: number;
  /** T */
  steps: number;
  /** Per encoder layer: (h, S, S). */
  encoder_self: Float32Array[];
  /** Per decoder layer: (h, T, T), causal. */
  decoder_self: Float32Array[];
  /** Per decoder layer: (h, T, S). */
  cross: Float32Array[];
  /** One entry per attention stack (kind and layer say which): the weights above, not copied again. */
  attention: AttentionLayer[];
  /** (T, V); only with {logits: true}. */
  logits?: Float32Array;
}

/** The date model's config, as its file stores it. */
export interface DateModelConfig {
  d_model: number;
  num_heads: number;
  num_encoder_layers: number;
  num_decoder_layers: number;
  dim_feedforward: number;
  norm_first: boolean;
  max_source_len: number;
  max_target_len: number;
  [key: string]: unknown;
}

/** The trained date translator: new mod.DateModel(bytes) (the .safetensors file). */
export interface DateModel extends EmbindObject {
  /** Greedy decoding until <eos> or max_target_len characters. */
  translate(text: string, options?: { ablated?: DateHead[]; logits?: boolean } | null): DateTranslation;
  readonly config: DateModelConfig;
  /** Token strings by id: <pad>, <bos>, <eos>, <unk>, then one character each. */
  readonly vocab: string[];
  /** The longest input, in characters. */
  readonly maxSourceLength: number;
  /** The verified XXH64 of the data section (16 hex digits). */
  readonly checksum: string;
}

/** The DateModel class of the full module. */
export interface DateModelClass {
  new (bytes: Bytes): DateModel;
  readonly prototype: DateModel;
}

/** The English model's config (defaults filled in). */
export interface EnglishModelConfig {
  d_model: number;
  num_heads: number;
  num_layers: number;
  dim_feedforward: number;
  vocab_size: number;
  max_len: number;
  layer_norm_eps: number;
  relative_bias: boolean;
  shortformer_positions: boolean;
}

/** EnglishModel.run's result (n tokens, <bos> first; W words; L layers; h heads). */
export interface EnglishRun {
  /** (n): the pieces as the vocabulary writes them: "<bos>", "▁the" (U+2581 marks a space), "<0xF0>". */
  tokens: string[];
  /** (W + 1): "<bos>", then the text's words as written (no piece crosses a word). */
  words: string[];
  /** (n): the word of each token, an index into words (0 for <bos>), rising by 0 or 1. */
  wordIndex: Int32Array;
  /** (n): all false (byte fallback: no token is unknown). */
  unknown: boolean[];
  /** (n): vocabulary ids. */
  ids: number[];
  /** Text tokens dropped beyond max_len. */
  truncatedTokens: number;
  /** The top K after the last token, most probable first. */
  nextToken: Array<{ token: string; probability: number }>;
  /** (n - 1): natural-log probability of token i+1 given tokens 0..i. */
  nextTokenLogprob: Float64Array;
  /** exp(-mean(nextTokenLogprob)); null when n == 1. */
  perplexity: number | null;
  /** L */
  layers: number;
  /** h */
  heads: number;
  n: number;
  /** (L, h, n, n); zero above the diagonal. */
  attnWeights: Float32Array;
  /** One entry per layer (kind 'self'): slices of attnWeights, not copied again. */
  attention: AttentionLayer[];
}

/** The English language model: new mod.EnglishModel(bytes) (the .safetensors file). */
export interface EnglishModel extends EmbindObject {
  /** The model on text: next words, perplexity, every head's weights. */
  run(text: string, options?: { top?: number; ablate?: Array<[number, number]> } | null): EnglishRun;
  /**
   * The loss per character over held-out texts (mha::english_heldout_loss: every token after
   * <bos>, texts beyond max_len skipped), with heads switched off.
   */
  heldoutLoss(
    texts: string[],
    options?: { ablate?: Array<[number, number]> } | null,
  ): {
    nats: number;
    characters: number;
    tokens: number;
    texts: number;
    skipped: number;
    /** nats / characters; null when no text was scored. */
    perCharacter: number | null;
  };
  readonly config: EnglishModelConfig;
  /** Token strings by id: <unk>, <bos>, then words and punctuation. */
  readonly vocab: string[];
  /** The verified xxh64 of the file (16 hex digits). */
  readonly checksum: string;
}

/** The EnglishModel class of the full module. */
export interface EnglishModelClass {
  new (bytes: Bytes): EnglishModel;
  readonly prototype: EnglishModel;
}

/**
 * SubwordTokenizer.encode's result for a text of p pieces and w words. Offsets count UTF-16
 * code units of the text (text.slice(spans[2i], spans[2i + 1]) is what piece i covers).
 */
export interface SubwordEncoding {
  /** (p) vocabulary ids, without <bos>. */
  ids: Int32Array;
  /** (p) the vocabulary's text of each id ("▁" for a space, "<0xE2>" for a byte). */
  pieces: string[];
  /** (2p) [begin, end) of each piece in the text, flat; of a character's byte pieces only the last covers it. */
  spans: Int32Array;
  /** (p) the word each piece belongs to (index into words); -1 when the text has no words. */
  word_index: Int32Array;
  /** (w) the page's words of the text (englishTokenize). */
  words: string[];
  /** (2w) [begin, end) of each word in the text, flat. */
  word_spans: Int32Array;
}

/** The English model's subword tokenizer (SentencePiece BPE with byte fallback). */
export interface SubwordTokenizer extends EmbindObject {
  /** The text's pieces as the sentencepiece library encodes it, with spans and words. */
  encode(text: string): SubwordEncoding;
  /** V, the number of pieces. */
  readonly vocabSize: number;
  /** (V) every piece's text by id. */
  readonly pieces: string[];
}

/** The SubwordTokenizer class of the full module. */
export interface SubwordTokenizerClass {
  /** description: the tokenizer's JSON (the model file's "tokenizer" metadata), as text or parsed. */
  new (description: string | object): SubwordTokenizer;
  readonly prototype: SubwordTokenizer;
}

// ---------------------------------------------------------------------------------------------
// Head patterns and explanations (mha_wasm.js only)

/** A stack of attention weights: (h, n, m), validated (finite, >= 0, rows sum to 1 or are all 0). */
export interface StackRequest {
  attn_weights: Floats;
  num_heads: number;
  n: number;
  /** Default n. */
  m?: number;
}

/** The label thresholds of headPatterns (docs/patterns.md). */
export interface PatternThresholds {
  previous_token: number;
  local_band: number;
  vertical_stripe: number;
  long_range: number;
  duplicate_token: number;
  induction: number;
  punctuation: number;
  margin: number;
}

/** One head's scores; null where no row could be scored. */
export interface HeadScoreValues {
  previous_token: number | null;
  diagonal: number | null;
  local_band: number | null;
  vertical_stripe: number | null;
  stripe_key: number;
  first_token: number | null;
  mean_distance: number | null;
  mean_distance_normalized: number | null;
  entropy_bits: number | null;
  entropy_normalized: number | null;
  max_weight: number | null;
  duplicate_token: number | null;
  induction: number | null;
  punctuation: number | null;
}

/** One head of headPatterns' result. */
export interface HeadPattern {
  head: number;
  rows_scored: number;
  causal: boolean;
  scores: HeadScoreValues;
  /** The same scores for a uniform head of the same shape. */
  uniform_baseline: HeadScoreValues;
  /** Any of "previous-token", "positional", "vertical-stripe", "long-range", "duplicate-token", "induction", "punctuation". */
  labels: string[];
}

/** headPatterns' request: a stack, its tokens and thresholds. */
export interface HeadPatternsRequest extends StackRequest {
  /** (m): the key tokens. */
  tokens?: string[];
  /** (n): the query tokens (cross-attention). */
  query_tokens?: string[];
  /** Strings that equal no token, not even themselves (a model's unknown token). */
  unmatched_tokens?: string[];
  thresholds?: Partial<PatternThresholds>;
}

/** headReport's request: one text's weights, layer by layer, and its tokens. */
export interface HeadReportRequest {
  /** L arrays of num_heads*n*n weights (self-attention). */
  layers: ArrayLike<number>[];
  num_heads: number;
  n: number;
  /** (n) */
  tokens: string[];
  /** (n): the word of each token, from 0, in steps of 0 or 1; the card is then by word. */
  word_index?: number[];
}

/** One score of the head report card (docs/patterns.md "Head report card"). */
export interface CardScore {
  name: string;
  /** The paper and what exactly is averaged. */
  protocol: string;
  /** The paper's figure, with its citation; null when there is none. */
  figure: string | null;
  value: number | null;
  /** The score of a uniform row over the visible keys, on the same rows (0.5 for coreference). */
  chance: number | null;
  /** Rows (or probes) averaged. */
  count: number;
  /** argmax_offset only: the head's most frequent argmax offset j - i. */
  offset?: number;
}

/** headReport's result. */
export interface HeadReportCard {
  by_word: boolean;
  examples: number;
  layers: number;
  num_heads: number;
  probes: number;
  nearer_name: number | null;
  /** The score names, in the order of every head's scores. */
  kinds: string[];
  heads: { layer: number; head: number; labels: string[]; scores: CardScore[] }[];
  best: {
    kind: string;
    layer: number;
    head: number;
    value: number;
    chance: number | null;
    offset?: number;
  }[];
}

/** explainCell's result: one weight made step by step. */
export interface CellExplanation {
  head: number;
  i: number;
  j: number;
  d_head: number;
  /** (d_head) */
  q_i: Float64Array;
  /** (d_head) */
  k_j: Float64Array;
  /** (d_head) */
  v_j: Float64Array;
  dot: number;
  /** 1 / sqrt(d_head) */
  scale: number;
  scaled: number;
  /** 0, -Infinity or the additive value. */
  mask_term: number;
  /** The core's logit. */
  score: number;
  row_max: number;
  exp_shifted: number;
  row_sum_shifted: number;
  exp_unshifted: number;
  row_sum_unshifted: number;
  weight_recomputed: number;
  /** The core's weight. */
  weight: number;
  row_fully_masked: boolean;
  /** (d_head): weight * v_j. */
  contribution: Float64Array;
  /** (d_head): the core's Y_head[i]. */
  head_output_i: Float64Array;
}

/** A .npy file's tensor. */
export interface NpyTensor {
  shape: number[];
  dtype: string;
  data: Float32Array;
}

/** An attention tensor from a file: (h, n, m), (L, h, n, m) or (L, 1, h, n, m). */
export interface LoadedAttention {
  /** Per layer: a validated (h, n, m) stack. */
  layers: Float32Array[];
  num_layers: number;
  num_heads: number;
  n: number;
  m: number;
  shape: number[];
  dtype: string;
}

/** The full module: the core, the trained models, head patterns, explanations and file loaders. */
export interface MhaModule extends MhaCoreModule {
  DateModel: DateModelClass;
  EnglishModel: EnglishModelClass;
  SubwordTokenizer: SubwordTokenizerClass;
  /** The tokens of text as the page's tokenize() splits it, from the C++ tokenizer. */
  englishTokenize(text: string): string[];
  /** Each head's scores and labels, and the heads' pairwise JS distances. */
  headPatterns(request: HeadPatternsRequest): {
    heads: HeadPattern[];
    /** (h, h) */
    js_distance: Float64Array;
    thresholds: PatternThresholds;
  };
  /** The head report card of one text: every score with its protocol, chance and paper figure. */
  headReport(request: HeadReportRequest): HeadReportCard;
  /**
   * (k, w, w): the by-word view of k stacked (n, n) matrices (weights: k*n*n, e.g. attnWeights):
   * W[u, v] = mean over the query pieces of word u of the sum over the key pieces of word v.
   * wordIndex: (n) from 0 in steps of 0 or 1; w = its last value + 1.
   */
  byWordWeights(weights: ArrayLike<number>, n: number, wordIndex: ArrayLike<number>): Float32Array;
  /** (h, h): mean Jensen–Shannon distance (base 2) between two heads' rows. */
  jsDistance(request: StackRequest): Float64Array;
  /** (n, m): mean over heads. */
  meanOverHeads(request: StackRequest): Float32Array;
  /** (n, m): max over heads. */
  maxOverHeads(request: StackRequest): Float32Array;
  /** (n, n): Abnar & Zuidema 2020's rollout of self-attention layers. */
  attentionRollout(request: { layers: Floats[]; num_heads: number; n: number }): Float64Array;
  /** (n, m) boolean attn_mask of the sliding window (windowMask of the core). */
  slidingWindowMask(request: WindowMaskRequest): Uint8Array;
  /** One cell of a forward result, step by step (result must hold its intermediates). */
  explainCell(
    result: ForwardResult,
    cell: {
      head: number;
      i: number;
      j: number;
      attn_mask?: Mask | null;
      key_padding_mask?: Mask | null;
      is_causal?: boolean | null;
    },
  ): CellExplanation;
  /** ||ablated - output||_F / ||output||_F of a forward request with ablated_heads. */
  ablationEffect(request: ForwardRequest): {
    relative_change: number;
    output: Float32Array;
    ablated_output: Float32Array;
  };
  /** A .npy file (dtype <f4, <f8, <f2; C order). */
  loadNpy(bytes: Bytes): NpyTensor;
  /** An attention tensor from .npy or safetensors (tensor names it). */
  loadAttention(bytes: Bytes, options?: { tensor?: string } | null): LoadedAttention;
  /** A safetensors nn.MultiheadAttention state_dict: the spec for new mod.MultiheadAttention(spec). */
  loadMultiheadAttention(
    bytes: Bytes,
    options?: { num_heads?: number; prefix?: string } | null,
  ): LayerSpec & { kdim: number; vdim: number };
}

// ---------------------------------------------------------------------------------------------
// The factories

/** The factory options the modules read. */
export interface ModuleOptions {
  /** false keeps the SIMD128 GEMM kernel where relaxed SIMD would validate (for comparisons). */
  relaxedSimd?: boolean;
  /** The wasm bytes, instead of the inlined ones. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Emscripten's hook: instantiates the wasm itself (pre.js supplies one by default). */
  instantiateWasm?: (
    imports: WebAssembly.Imports,
    receiveInstance: (instance: WebAssembly.Instance, module?: WebAssembly.Module) => void,
  ) => object;
}

/** mha_wasm_core.js's factory: module.exports under node, the global createMhaCore in a page. */
export interface MhaCoreFactory {
  (options?: ModuleOptions): Promise<MhaCoreModule>;
  /**
   * The module the script started itself (its tag's data-start, start_early.js): take it once
   * and set it to null; absent where nothing was started.
   */
  started?: Promise<MhaCoreModule> | null;
}

/** mha_wasm.js's factory: module.exports under node, the global createMhaModule in a page. */
export type MhaModuleFactory = (options?: ModuleOptions) => Promise<MhaModule>;

declare global {
  /** Defined by <script src="mha_wasm_core.js"> (or importScripts in a worker). */
  var createMhaCore: MhaCoreFactory;
  /** Defined by <script src="mha_wasm.js">. */
  var createMhaModule: MhaModuleFactory;
}
