// The English mode's code as a classic script of its own, dist/english.js: modes/lazy_mode.js (in
// app.js) adds it when the mode is first shown, and makes the mode with
// globalThis.mhaEnglishMode.make. MHA_ENGLISH_BUILD is replaced at bundling (esbuild's define) by
// what scripts/build_web.mjs found: the model's file names, its size and the heads' typical roles,
// or null when the build had no model.
/* global MHA_ENGLISH_BUILD */
import { EnglishMode } from './english_mode.js';

globalThis.mhaEnglishMode = {
  build: MHA_ENGLISH_BUILD,
  make: (ctx, panel) => new EnglishMode(ctx, panel, MHA_ENGLISH_BUILD),
};
