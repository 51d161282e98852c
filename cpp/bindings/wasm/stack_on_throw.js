// --post-js for mha_wasm.js and mha_wasm_core.js: a call from JS into the module that throws
// gives back the stack it took.
//
// A bound function that fails throws a JS Error from inside the wasm (js_convert.hpp guarded:
// val::throw_). That exception leaves the wasm frames without their epilogues, which would have
// moved the stack pointer back up: each error kept 16-32 bytes of the module's 5 MB stack, and
// after ~327,000 errors the module aborted ("memory access out of bounds" from then on). Every
// invoker Embind makes (functions, methods, constructors, properties) comes from
// embind__requireFunction; the wrapper below notes the stack pointer before the call and puts it
// back when the call throws, so the module keeps working after any number of errors
// (tests/js/bad_inputs.test.mjs). The cost is one try/catch and one small wasm call per call.
(function () {
  var requireFunction = embind__requireFunction;
  embind__requireFunction = function (signature, rawFunction) {
    var invoker = requireFunction(signature, rawFunction);
    return function () {
      var top = stackSave();
      try {
        return invoker.apply(this, arguments);
      } catch (e) {
        stackRestore(top);
        throw e;
      }
    };
  };
})();
// The stack pointer now (a byte address; the stack grows down), for tests/js/bad_inputs.test.mjs.
// Underscored like Emscripten's own exports: not part of the API (docs/js-api.md).
Module['_stackPointer'] = function () {
  return stackSave();
};
