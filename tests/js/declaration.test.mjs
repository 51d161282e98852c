// The declaration file cpp/bindings/wasm/mha_wasm.d.ts against both built modules: read with the
// TypeScript compiler (its type checker resolves `extends`), every member it declares on
// MhaCoreModule (mha_wasm_core.js) and MhaModule (mha_wasm.js) exists in the module with the kind
// declared (a method: a function; a member whose type can be constructed: an Embind class, whose
// instance members are checked the same way on its prototype; any other: a value that is not a
// function), and every name the modules export through Embind is declared.
// Run: node --test tests/js/declaration.test.mjs
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRequire } from 'node:module';
import { root, loadModule } from './module.mjs';

const ts = createRequire(import.meta.url)('typescript');
const dtsPath = path.join(root, 'cpp/bindings/wasm/mha_wasm.d.ts');

/**
 * The names Emscripten's glue puts on every module, which are not the API: underscored exports
 * (the wasm's own functions, and `_stackPointer` of stack_on_throw.js), the heap views, dynCall_*
 * and the runtime's and Embind's bookkeeping.
 */
const GLUE = new Set([
  'ready',
  'instantiateWasm',
  'inspect',
  'preloadedImages',
  'preloadedAudios',
  'InternalError',
  'BindingError',
  'UnboundTypeError',
  'getInheritedInstanceCount',
  'getLiveInheritedInstances',
  'flushPendingDeletes',
  'setDelayFunction',
  'count_emval_handles',
  'get_first_emval',
  'stackSave',
  'stackRestore',
  'run',
  'asm',
  'calledRun',
]);
const isGlue = (name) =>
  GLUE.has(name) || name.startsWith('_') || /^HEAP/.test(name) || name.startsWith('dynCall_');

/** Members every Embind object has from Embind's base class (ClassHandle), beside the declared ones. */
const HANDLE = new Set(['constructor', 'clone', 'delete', 'isDeleted', 'deleteLater', 'isAliasOf']);

let checker;
let file;
let modules;
before(async () => {
  const program = ts.createProgram([dtsPath], {
    noEmit: true,
    strict: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  });
  const errors = ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  assert.deepEqual(errors, [], 'mha_wasm.d.ts compiles');
  checker = program.getTypeChecker();
  file = program.getSourceFile(dtsPath);
  modules = { core: await loadModule('mha_wasm_core.js'), full: await loadModule('mha_wasm.js') };
});

/** The type of the exported interface `name` of the declaration file. */
function declared(name) {
  const symbol = checker.getSymbolAtLocation(file).exports.get(name);
  assert.ok(symbol, `mha_wasm.d.ts exports ${name}`);
  return checker.getDeclaredTypeOfSymbol(symbol);
}

/**
 * Each member of `type`: {name, kind, optional, instance}, kind 'function' (a method, or a property
 * of a function type), 'class' (a property whose type has a construct signature; instance: the type
 * it constructs) or 'property'.
 */
function members(type) {
  return checker.getPropertiesOfType(type).map((symbol) => {
    const decl = symbol.valueDeclaration ?? symbol.declarations[0];
    const t = checker.getTypeOfSymbolAtLocation(symbol, decl);
    const optional = (symbol.flags & ts.SymbolFlags.Optional) !== 0;
    const constructs = t.getConstructSignatures();
    if (constructs.length > 0) {
      return {
        name: symbol.name,
        kind: 'class',
        optional,
        instance: constructs[0].getReturnType(),
      };
    }
    const method =
      ts.isMethodSignature(decl) || checker.getNonNullableType(t).getCallSignatures().length > 0;
    return { name: symbol.name, kind: method ? 'function' : 'property', optional };
  });
}

/** The property descriptor of `name` on `proto` or the first prototype above it that has one. */
function descriptor(proto, name) {
  for (let p = proto; p; p = Object.getPrototypeOf(p)) {
    const d = Object.getOwnPropertyDescriptor(p, name);
    if (d) return d;
  }
  return {};
}

/** Checks `value`'s member `m` against its declared kind; classes also their instance members. */
function checkMember(where, value, m) {
  const v = value[m.name];
  if (m.optional && v === undefined) return;
  assert.ok(m.name in value, `${where}.${m.name} is declared but the module has none`);
  if (m.kind === 'property') {
    assert.notEqual(
      typeof v,
      'function',
      `${where}.${m.name} is declared a property, the module's is a function`,
    );
    return;
  }
  assert.equal(typeof v, 'function', `${where}.${m.name} is declared a ${m.kind}`);
  if (m.kind !== 'class') return;
  // An Embind class: methods are functions on its prototype, properties are getters there.
  const proto = v.prototype;
  const instance = members(m.instance);
  for (const im of instance) {
    assert.ok(im.name in proto, `${where}.${m.name}.prototype.${im.name} is declared but missing`);
    const d = descriptor(proto, im.name);
    if (im.kind === 'property') {
      assert.ok(
        d.get,
        `${where}.${m.name}#${im.name} is declared a property, the module's has no getter`,
      );
    } else {
      assert.equal(
        typeof d.value,
        'function',
        `${where}.${m.name}#${im.name} is declared a method`,
      );
    }
  }
  const names = new Set(instance.map((im) => im.name));
  const undeclared = Object.getOwnPropertyNames(proto).filter(
    (n) => !names.has(n) && !HANDLE.has(n),
  );
  assert.deepEqual(undeclared, [], `${where}.${m.name}'s members missing from mha_wasm.d.ts`);
}

for (const [key, file, name] of [
  ['core', 'mha_wasm_core.js', 'MhaCoreModule'],
  ['full', 'mha_wasm.js', 'MhaModule'],
]) {
  test(`${name} declares ${file}: every declared member exists with its kind`, () => {
    const mod = modules[key];
    const declaredMembers = members(declared(name));
    assert.ok(declaredMembers.length > 10, `${name} has ${declaredMembers.length} members`);
    for (const m of declaredMembers) checkMember(name, mod, m);
  });

  test(`${name} declares ${file}: every Embind export is declared`, () => {
    const mod = modules[key];
    const names = new Set(members(declared(name)).map((m) => m.name));
    const undeclared = Object.keys(mod).filter((k) => !isGlue(k) && !names.has(k));
    assert.deepEqual(undeclared, [], `exports of ${file} missing from ${name} in mha_wasm.d.ts`);
  });
}

test('the core declares no member of the full module only, and the full module every core member', () => {
  const core = new Set(members(declared('MhaCoreModule')).map((m) => m.name));
  const full = new Set(members(declared('MhaModule')).map((m) => m.name));
  for (const n of core) assert.ok(full.has(n), `MhaModule lacks the core's ${n}`);
  for (const n of ['DateModel', 'EnglishModel', 'headPatterns', 'loadNpy']) {
    assert.ok(full.has(n) && !core.has(n), n);
    assert.equal(n in modules.core, false, `mha_wasm_core.js has no ${n}`);
  }
});

test('the kinds the declaration gives the trained models: config, vocab, checksum are properties', () => {
  for (const cls of ['DateModel', 'EnglishModel']) {
    const m = members(declared('MhaModule')).find((x) => x.name === cls);
    assert.equal(m.kind, 'class');
    const kinds = Object.fromEntries(members(m.instance).map((im) => [im.name, im.kind]));
    assert.equal(kinds.config, 'property', cls);
    assert.equal(kinds.vocab, 'property', cls);
    assert.equal(kinds.checksum, 'property', cls);
    assert.equal(kinds.delete, 'function', cls);
  }
});
