// --extern-post-js for mha_wasm_core.js only: runs once the factory createMhaCore is defined.
//
// A page whose <script src="mha_wasm_core.js"> carries the attribute data-start (index.html) has
// the core started by the script itself: its wasm is decoded, inflated and compiled while the
// page's own script is still being fetched and evaluated and the page is first laid out, instead
// of after. createMhaCore.started holds that module's promise; the page takes it once
// (web/src/compute/wasm_modules.js, WasmModules), so the factory still runs once per page. The core
// is then ready, and the first grid painted, sooner after navigation (docs/benchmarks.md, "Measurements
// behind the page's design"). Workers, node and pages without the attribute are unchanged: they
// call the factory when they want a module.
if (typeof document === 'object' && document.currentScript?.hasAttribute('data-start')) {
  // A Promise: the factory throws at once where there is no WebAssembly, and that rejects it.
  // Handled by whoever takes it (startCore reports a failure); no "unhandled rejection" before.
  (createMhaCore.started = new Promise(function (resolve) {
    resolve(createMhaCore());
  })).catch(function () {});
}
