// The figure export (SVG, PNG at 1×/2×/4×) as a classic script of its own, dist/figure.js: the
// page adds it on the first Save PNG / Save SVG (ctx.modules.loadScript), so it is not part of
// the first load (tests/web/size_budget.test.mjs).
import { figureFile, saveFigure } from './figure_save.js';

globalThis.mhaFigure = { figureFile, saveFigure };
