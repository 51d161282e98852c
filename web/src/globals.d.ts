// What the page's modules find defined by others, for the TypeScript compiler (tsconfig.json):
// the classic scripts scripts/build_web.mjs writes beside the page, esbuild's define, the worker's
// importScripts and the stylesheets esbuild bundles. The wasm modules' factories and API are
// declared in cpp/bindings/wasm/mha_wasm.d.ts.

/** A trained model's file carried as base64 by a classic script (dist/date_model.js, dist/english_lm.js). */
interface BundledModel {
  /** The file's size in bytes. */
  bytes: number;
  /** The .safetensors file, base64. */
  safetensors: string;
  /** The JSON of the model's heads file (web/*_heads.json), or null. */
  heads: object | null;
}

/** Set by dist/date_model.js. */
declare var MHA_DATE_MODEL: BundledModel | undefined;
/** Set by dist/english_lm.js. */
declare var MHA_ENGLISH_MODEL: BundledModel | undefined;
/** Replaced at bundling (esbuild's define): the English model this build has, or null. */
declare const MHA_ENGLISH_BUILD: {
  file: string;
  script: string;
  bytes: number;
  heads: object | null;
  /** The experiments' measurements (scripts/build_web.mjs readExperiments), or null. */
  experiments: {
    english: object | null;
    date: object | null;
    sweep: object | null;
    replay: object | null;
    heldout: string[];
    /** The one-head model's files (web/english_lm_h1.safetensors), or null. */
    oneHead: {
      file: string;
      script: string;
      global: string;
      bytes: number;
      heads: object | null;
    } | null;
  } | null;
} | null;

/** A classic worker's script loader (compute/compute_worker.js). */
declare function importScripts(...urls: string[]): void;
/** A worker's message to its page, with the buffers it hands over (compute/compute_worker.js). */
declare function postMessage(message: unknown, transfer: Transferable[]): void;

/** Stylesheets imported for esbuild, which bundles them as text. */
declare module '*.css' {
  const css: string;
  export default css;
}
