// The Files panel's code (explain/file_load.js and what it draws with) as a classic script of its
// own, dist/file_panel.js: explain.js adds it when the panel is first opened, as it does the full
// module that reads the files. About 3 KB gzip that the page's first load does without
// (tests/web/size_budget.test.mjs); the few helpers it shares with app.js (the grids, the
// combined views) are bundled into both.
import { buildFilePanel } from './explain/file_load.js';

globalThis.mhaFilePanel = { buildFilePanel };
