// mha-lab page, boot: takes the attention core that index.html's core script has started,
// builds the page's parts (chrome/, modes/, compute/) and shows the view of the address.
// Bundled by scripts/build_web.mjs into one classic script, dist/app.js (file:// safe). The parts
// hold all the state; this file only connects them (docs/architecture.md).
import { Page } from './chrome/page.js';
import { Address } from './chrome/address.js';
import { UpdateClock } from './chrome/timing.js';
import { errorMessage } from './chrome/alerts.js';
import { Compute } from './compute/compute.js';
import { warmUp } from './compute/warm_up.js';
import { CORE_SCRIPT, WasmModules } from './compute/wasm_modules.js';
import { rampWords } from './draw/color.js';
import { LabelCache } from './draw/labels.js';
import { RandomMode } from './modes/random/random_mode.js';
import { RANDOM_HASH_KEYS } from './modes/random/random_state.js';
import { DATE_HASH_KEYS } from './modes/date/date_state.js';
import { ENGLISH_HASH_KEYS } from './modes/english/english_state.js';
import { LazyMode } from './modes/lazy_mode.js';

/** Idle periods the warm-up takes, and calls of each kind in each. */
const WARM_SLICES = 6,
  WARM_CALLS = 2;

async function boot(doc) {
  const win = doc.defaultView;
  // The core's script has already started it (data-start in index.html): its wasm is inflated and
  // compiled while this script is fetched and evaluated and the page is laid out.
  const modules = new WasmModules({ doc });
  const started = modules.coreScriptLoaded() ? modules.startCore() : null;
  const coreVersion = doc.getElementById('core-version');
  // Diagnostics (tests/browser/memory.test.mjs): after every update the core's memoryStats() are
  // on #core-version as data-malloc-in-use-bytes and data-wasm-memory-bytes.
  const showMemoryStats = (stats) => {
    coreVersion.dataset.mallocInUseBytes = String(stats.malloc_in_use_bytes);
    coreVersion.dataset.wasmMemoryBytes = String(stats.wasm_memory_bytes);
  };
  const address = new Address(win.location, win.history);
  // One label cache for every grid of the page (both modes and the explain panels): the heads of
  // a view copy their labels from the same sprites. Every mode's address keys: a mode reading an
  // address notes the keys none of them reads (chrome/address_keys.js addressNotes).
  const ctx = {
    doc,
    core: null,
    compute: null,
    clock: new UpdateClock(),
    address,
    modules,
    showMemoryStats,
    labels: new LabelCache(),
    embedded: () => page.embed,
    addressKeys: [...new Set([...RANDOM_HASH_KEYS, ...DATE_HASH_KEYS, ...ENGLISH_HASH_KEYS])],
  };
  const random = new RandomMode(ctx);
  // The Date translator and the English mode are bundled apart (dist/date.js, dist/english.js),
  // added when first shown; both save their grids as figures (Save PNG, Save SVG).
  const date = new LazyMode(ctx, {
    id: 'date',
    script: 'date.js',
    global: 'mhaDateMode',
    panel: 'date-panel',
    shareSlot: 'date-share-slot',
    name: 'Date translator',
    exports: 'figure',
  });
  const english = new LazyMode(ctx, {
    id: 'english',
    script: 'english.js',
    global: 'mhaEnglishMode',
    panel: 'english-panel',
    name: 'English mode',
    exports: 'figure',
  });
  const page = new Page(doc, {
    modes: [random, date, english],
    address,
    onEmbed: (on) => {
      ctx.compute?.lookahead.setOn(!on);
      // In an iframe, mha-embed.js reports the content's height to the parent page (docs/embedding.md).
      if (on) modules.loadScript('mha-embed.js');
    },
    loadScript: (name) => modules.loadScript(name),
  });
  random.prepare();
  if (!started) {
    random.unavailable(
      `The attention core (${CORE_SCRIPT}) did not load, so nothing can be computed. ` +
        `Rebuild the page with ./scripts/build.sh and keep ${CORE_SCRIPT} next to index.html.`,
    );
    return;
  }
  try {
    ctx.core = await started;
  } catch (e) {
    random.unavailable(`The attention core failed to start: ${errorMessage(e)}`);
    return;
  }
  coreVersion.textContent = String(ctx.core.version);
  coreVersion.dataset.gemmKernel = String(ctx.core.gemmKernel); // relaxed_madd or simd128 (relaxed_simd.js)
  ctx.compute = new Compute(ctx.core, { lut: rampWords() });
  const shown = page.start();
  // The compute workers start after the first grid is painted (served pages only: compute.js).
  win.requestAnimationFrame(() => setTimeout(() => ctx.compute.startWorker(), 0));
  doc.documentElement.dataset.ready = 'true';
  // This thread's core computes small views, and every view from file:// (no worker there): its
  // kernels are made hot while the page is idle (warm_up.js), a few calls per idle period.
  const idle = win.requestIdleCallback?.bind(win) ?? ((f) => setTimeout(f, 200));
  let slices = WARM_SLICES;
  const warmSlice = () => {
    if (slices-- <= 0) return;
    warmUp(ctx.core, { calls: WARM_CALLS, seed: random.seed() });
    idle(warmSlice);
  };
  idle(warmSlice);
  await shown;
}

boot(document);
