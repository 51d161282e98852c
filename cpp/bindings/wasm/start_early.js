// --extern-post-js for mha_wasm_core.js only: runs once the factory createMhaCore is defined.
//
// A page whose <script src="mha_wasm_core.js"> carries the attribute data-start (index.html) has
// the core started by the script itself: its wasm is decoded, inflated and compiled while the
// page's own script is still being fetched and evaluated and the page is first laid out, instead
// of after. createMhaCore.started holds that module's promise; the page takes it once
// (web/src/compute/wasm_modules.js, WasmModules), so the factory still runs once per page. Measured in
// headless Chromium 156 on the 2-core benchmark machine, 11 fresh loads each, alternating: core
// ready 232 ms after navigation instead of 267, first grid painted at 305 instead of 343
// (scripts/bench/notes.md). Workers, node and pages without the attribute are unchanged: they
// call the factory when they want a module.
if (typeof document === 'object' && document.currentScript?.hasAttribute('data-start')) {
  // A Promise: the factory throws at once where there is no WebAssembly, and that rejects it.
  // Handled by whoever takes it (startCore reports a failure); no "unhandled rejection" before.
  (createMhaCore.started = new Promise(function (resolve) { resolve(createMhaCore()); })).catch(function () {});
}
