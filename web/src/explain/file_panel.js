// The Files panel's code (explain/file_load.js and what it draws with) as a classic script of its
// own, dist/file_panel.js: explain.js adds it when the panel is first opened, as it does the full
// module that reads the files: app.js is about 3 KB gzip smaller for it (43.4 → 40.4 KB, gzip -9;
// tests/web/size_budget.test.mjs). What it shares with app.js (the grids' heatmap.js, the colour
// table, the combined views: about 10 KB of its 13.6 KB gzip) is bundled into both.
import { buildFilePanel } from './file_load.js';

globalThis.mhaFilePanel = { buildFilePanel };
