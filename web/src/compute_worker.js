// The page's compute worker (dist/compute_worker.js, a classic worker script): runs the attention
// core's numpyExperiment off the main thread, so typing never waits for a large view. Loads the
// same core as the page (importScripts, allowed by script-src 'self'). Protocol (compute.js):
//   worker -> page: {ready: true} once the core has started, or {failed: message}
//   page -> worker: {id, part?, request, lut?}
//                                        (a numpyExperiment request; part 0 or 1: half of a call
//                                         split by heads between two workers, compute.js; lut:
//                                         the grids' colour table, sent for the grids the page
//                                         leaves to the workers (compute.js colouredByWorkers): the
//                                         result then also has `pixels`, one RGBA buffer per
//                                         head, pixels.js)
//                or {prime: request}     (computed and dropped, no answer: the seed's draws and
//                                         the kernels are then ready for the first real call)
//   worker -> page: {id, part?, result, stats}  (typed arrays transferred, not copied)
//                or {id, part?, error, stats}   (the core's Error message)
// stats: the worker core's memoryStats(), for the page's diagnostics.
/* global createMhaCore */
import { warmUp } from './warm_up.js';
import { resultPixels } from './pixels.js';

importScripts('mha_wasm_core.js');

let mod = null;
const started = createMhaCore().then(
  (m) => {
    mod = m;
    postMessage({ ready: true });
    warmUp(m); // `started` resolves after this: the first request finds the kernels hot
  },
  (e) => postMessage({ failed: e instanceof Error ? e.message : String(e) }),
);

onmessage = async (e) => {
  await started;
  if (e.data.prime) {
    try {
      if (mod) mod.numpyExperiment(e.data.prime);
    } catch {
      // A request the page could not have sent; the real call will say what is wrong.
    }
    return;
  }
  const { id, part, request } = e.data;
  if (!mod) {
    postMessage({ id, part, error: 'the attention core did not start in the worker' });
    return;
  }
  try {
    const result = mod.numpyExperiment(request);
    // The cells coloured here, in parallel with the other worker, not on the page after both.
    if (e.data.lut) result.pixels = resultPixels(result, e.data.lut);
    const buffers = [...Object.values(result), ...(result.pixels ?? [])]
      .filter((v) => ArrayBuffer.isView(v)).map((v) => v.buffer);
    postMessage({ id, part, result, stats: mod.memoryStats() }, buffers);
  } catch (err) {
    postMessage({ id, part, error: err instanceof Error ? err.message : String(err), stats: mod.memoryStats() });
  }
};
