// The import graph of web/src (the page's parts: docs/architecture.md): every static import
// and re-export of every source file, resolved to files. No cycle; a mode never imports another
// mode (but every mode may import modes/trained, what the trained-model modes share, which
// imports no mode); nothing but the boot file and the element imports a mode; drawing imports only drawing;
// compute only compute and drawing (the workers colour cells with draw/pixels.js); chrome only
// chrome, drawing and compute (never a mode nor an explain panel: the modes hand it their keys);
// explain only explain, chrome, drawing and compute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'src');

/** Every .js file of web/src, relative ('modes/date/date_mode.js'). */
function sources() {
  return readdirSync(SRC, { recursive: true })
    .filter((f) => f.endsWith('.js'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

/** The relative imports of `file` (import … from, export … from, import '…', import('…')), as files of web/src. */
function importsOf(file) {
  const text = readFileSync(path.join(SRC, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const specs = [
    ...text.matchAll(/\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"`]([^'"`]+)['"`]/g),
    ...text.matchAll(/\bimport\s*\(?\s*['"`]([^'"`]+)['"`]/g),
    // A worker or other file the code loads by URL: an edge like an import.
    ...text.matchAll(/\bnew\s+URL\s*\(\s*['"`]([^'"`]+)['"`]\s*,\s*import\.meta\.url/g),
  ]
    .map((m) => m[1])
    .filter((s) => s.startsWith('.'));
  return (
    [...new Set(specs)]
      .map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s)))
      // Styles and other assets the bundle inlines are not modules of the graph.
      .filter((s) => !/\.(css|svg|json|safetensors)$/.test(s))
  );
}

/** The part a file belongs to: 'chrome', 'draw', 'compute', 'explain', 'element', 'modes/<name>', or '' (the boot file). */
function partOf(file) {
  const [top, name] = file.split('/');
  if (top === 'modes') return `modes/${name}`;
  return file.includes('/') ? top : '';
}

/** The graph {file: [imported files]} of the files given, with every import checked to exist. */
function graphOf(files) {
  const known = new Set(files);
  const graph = {};
  for (const f of files) {
    graph[f] = importsOf(f);
    for (const to of graph[f]) {
      // Browsers need the file's whole name; a bundler would also take '../x' or '../x/index',
      // which this graph must not miss.
      assert.ok(
        to.endsWith('.js') && !to.includes('${'),
        `${f} imports ${to}: name the file with its .js`,
      );
      assert.ok(known.has(to), `${f} imports ${to}, which is not a file of web/src`);
    }
  }
  return graph;
}

/** A cycle of `graph` as a list of files (its first file again at the end), or null. */
function findCycle(graph) {
  const state = new Map(); // file: 1 (on the path) | 2 (done)
  const pathNow = [];
  const visit = (f) => {
    state.set(f, 1);
    pathNow.push(f);
    for (const to of graph[f] ?? []) {
      if (state.get(to) === 1) return [...pathNow.slice(pathNow.indexOf(to)), to];
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    pathNow.pop();
    state.set(f, 2);
    return null;
  };
  for (const f of Object.keys(graph)) {
    if (!state.has(f)) {
      const found = visit(f);
      if (found) return found;
    }
  }
  return null;
}

/** Which parts each part may import (besides itself). */
const ALLOWED = {
  draw: [],
  compute: ['draw'],
  chrome: ['draw', 'compute'],
  explain: ['draw', 'compute', 'chrome'],
  element: ['draw', 'compute', 'chrome', 'explain', 'modes/*'],
  '': ['draw', 'compute', 'chrome', 'explain', 'modes/*'],
};
const MODE_ALLOWED = ['draw', 'compute', 'chrome', 'explain', 'modes/trained'];

/** The imports of `graph` that break the rules, as "from → to (why)" lines. */
function ruleBreaks(graph) {
  const out = [];
  for (const [from, tos] of Object.entries(graph)) {
    const a = partOf(from);
    for (const to of tos) {
      const b = partOf(to);
      if (a === b) continue;
      const allowed = a.startsWith('modes/') ? MODE_ALLOWED : (ALLOWED[a] ?? []);
      const ok = allowed.includes(b) || (b.startsWith('modes/') && allowed.includes('modes/*'));
      if (ok) continue;
      const why =
        a.startsWith('modes/') && b.startsWith('modes/')
          ? 'a mode imports another mode'
          : b.startsWith('modes/')
            ? `${a || 'the boot file'} imports a mode`
            : `${a || 'the boot file'} may not import ${b || 'the boot file'}`;
      out.push(`${from} → ${to} (${why})`);
    }
  }
  return out;
}

test('web/src is made of the parts: chrome, modes, draw, compute, explain (and the element, the boot file)', () => {
  const parts = new Set(sources().map(partOf));
  for (const p of [
    'chrome',
    'draw',
    'compute',
    'explain',
    'modes/random',
    'modes/date',
    'element',
    '',
  ]) {
    assert.ok(parts.has(p), `part ${p || '(boot)'} exists`);
  }
  assert.deepEqual(
    [...parts].filter((p) => !(p in ALLOWED) && !p.startsWith('modes/')),
    [],
    'no file outside the parts',
  );
  assert.deepEqual(
    sources().filter((f) => partOf(f) === ''),
    ['main.js'],
    'one boot file at the top',
  );
});

test('the import graph of web/src has no cycle', () => {
  const cycle = findCycle(graphOf(sources()));
  assert.equal(cycle, null, `import cycle: ${cycle?.join(' → ')}`);
});

test('modes do not import each other; drawing, compute, chrome and explain import no mode; chrome imports no explain panel', () => {
  assert.deepEqual(ruleBreaks(graphOf(sources())), []);
});

test('the checks find what they look for (a cycle, a mode importing a mode, drawing or chrome importing a mode, chrome importing explain)', () => {
  assert.deepEqual(findCycle({ 'a.js': ['b.js'], 'b.js': ['c.js'], 'c.js': ['a.js'] }), [
    'a.js',
    'b.js',
    'c.js',
    'a.js',
  ]);
  assert.equal(findCycle({ 'a.js': ['b.js'], 'b.js': [] }), null);
  assert.deepEqual(
    ruleBreaks({
      'modes/date/x.js': ['modes/random/y.js', 'draw/color.js', 'modes/trained/z.js'],
      'modes/trained/z.js': ['modes/english/w.js', 'draw/color.js'],
      'draw/heatmap.js': ['modes/date/x.js'],
      'compute/compute.js': ['chrome/page.js'],
      'chrome/page.js': [
        'modes/date/x.js',
        'modes/lazy_mode.js',
        'explain/explain_state.js',
        'chrome/values.js',
        'draw/color.js',
      ],
      'explain/explain.js': ['chrome/values.js', 'modes/random/y.js'],
      'main.js': ['modes/date/x.js'],
    }),
    [
      'modes/date/x.js → modes/random/y.js (a mode imports another mode)',
      'modes/trained/z.js → modes/english/w.js (a mode imports another mode)',
      'draw/heatmap.js → modes/date/x.js (draw imports a mode)',
      'compute/compute.js → chrome/page.js (compute may not import chrome)',
      'chrome/page.js → modes/date/x.js (chrome imports a mode)',
      'chrome/page.js → modes/lazy_mode.js (chrome imports a mode)',
      'chrome/page.js → explain/explain_state.js (chrome may not import explain)',
      'explain/explain.js → modes/random/y.js (explain imports a mode)',
    ],
  );
});
