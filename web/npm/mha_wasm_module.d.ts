// Types for mha_wasm.js, the full module (factory createMhaModule: the core plus the trained
// models): under node its module.exports, in a page the global createMhaModule. The API:
// mha_wasm.d.ts (docs/js-api.md).
import type { MhaModuleFactory } from './mha_wasm';

declare const createMhaModule: MhaModuleFactory;
export = createMhaModule;
