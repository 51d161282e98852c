// web/src/element/scheme.js: the colour scheme <mha-attention> draws in, from its theme attribute,
// the scheme its host page declares (JupyterLab's and VS Code's notebook bodies, a one-scheme
// CSS color-scheme) and prefers-color-scheme, in that order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostScheme, resolveScheme } from '../../web/src/element/scheme.js';

/** A stand-in for <body> with these attributes and classes. */
function body(attributes = {}, classes = []) {
  return {
    getAttribute: (name) => (Object.hasOwn(attributes, name) ? attributes[name] : null),
    classList: { contains: (c) => classes.includes(c) },
  };
}

test('JupyterLab: data-jp-theme-light names the scheme, over the page color-scheme', () => {
  assert.equal(hostScheme(body({ 'data-jp-theme-light': 'false' }), 'light'), 'dark');
  assert.equal(hostScheme(body({ 'data-jp-theme-light': 'true' }), 'dark'), 'light');
});

test("VS Code's webview: the body's theme kind or class names the scheme", () => {
  assert.equal(hostScheme(body({}, ['vscode-body', 'vscode-dark']), ''), 'dark');
  assert.equal(hostScheme(body({}, ['vscode-light']), 'normal'), 'light');
  assert.equal(hostScheme(body({}, ['vscode-high-contrast']), ''), 'dark');
  assert.equal(
    hostScheme(body({}, ['vscode-high-contrast', 'vscode-high-contrast-light']), ''),
    'light',
  );
  assert.equal(hostScheme(body({ 'data-vscode-theme-kind': 'vscode-dark' }), 'light'), 'dark');
});

test('any page: a color-scheme naming one scheme only; "light dark" and "normal" name none', () => {
  assert.equal(hostScheme(body(), 'dark'), 'dark');
  assert.equal(hostScheme(body(), 'only light'), 'light');
  assert.equal(hostScheme(body(), 'light dark'), null);
  assert.equal(hostScheme(body(), 'normal'), null);
  assert.equal(hostScheme(body(), ''), null);
  assert.equal(hostScheme(null, ''), null);
});

test('theme="light" / "dark" win; else the host; else prefers-color-scheme', () => {
  assert.equal(resolveScheme('light', 'dark', true), 'light');
  assert.equal(resolveScheme('dark', 'light', false), 'dark');
  assert.equal(resolveScheme('auto', 'dark', false), 'dark');
  assert.equal(resolveScheme(null, 'light', true), 'light');
  assert.equal(resolveScheme(null, null, true), 'dark');
  assert.equal(resolveScheme('sepia', null, false), 'light');
});
