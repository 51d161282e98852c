// Types for mha_wasm_core.js, the attention core (factory createMhaCore): under node its
// module.exports, in a page the global createMhaCore. The API: mha_wasm.d.ts (docs/js-api.md).
import type { MhaCoreFactory } from './mha_wasm';

declare const createMhaCore: MhaCoreFactory;
export = createMhaCore;
