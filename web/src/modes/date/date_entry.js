// The Date translator's code as a classic script of its own, dist/date.js: modes/lazy_mode.js (in
// app.js) adds it when the mode is first shown, and makes the mode with globalThis.mhaDateMode.make.
import { DateMode } from './date_mode.js';

globalThis.mhaDateMode = { make: (ctx) => new DateMode(ctx) };
