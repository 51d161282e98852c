// The colour scheme <mha-attention> draws in: the theme attribute's light or dark, else the one
// its host page declares (a notebook's or an editor's theme), else the reader's
// prefers-color-scheme. element.css holds one set of dark colours, applied under
// data-scheme="dark" on the element.

/** The body attributes and classes hostScheme reads (for a MutationObserver's attributeFilter). */
export const HOST_SCHEME_ATTRIBUTES = Object.freeze([
  'class',
  'style',
  'data-jp-theme-light',
  'data-vscode-theme-kind',
]);

/**
 * The colour scheme a host page declares, or null where it declares none (pure; exported for
 * tests). Read in this order:
 * - JupyterLab: <body data-jp-theme-light="true|false">, set by its theme manager;
 * - VS Code's webviews (its notebook outputs): <body data-vscode-theme-kind> or the body class
 *   vscode-light, vscode-dark, vscode-high-contrast (dark) or vscode-high-contrast-light;
 * - any page: the CSS color-scheme around the element naming one scheme only ("dark",
 *   "only light"; "light dark" and "normal" name none). JupyterLab 4.2 and later also set it.
 * @param {{getAttribute(name: string): string|null, classList: {contains(c: string): boolean}}|null} body
 * @param {string} colorScheme the computed color-scheme of the element's parent ('' if unknown)
 * @returns {'light'|'dark'|null}
 */
export function hostScheme(body, colorScheme) {
  const jp = body?.getAttribute('data-jp-theme-light');
  if (jp === 'true') return 'light';
  if (jp === 'false') return 'dark';
  const kind =
    body?.getAttribute('data-vscode-theme-kind') ??
    ['vscode-high-contrast-light', 'vscode-high-contrast', 'vscode-dark', 'vscode-light'].find(
      (c) => body?.classList.contains(c),
    );
  if (kind === 'vscode-light' || kind === 'vscode-high-contrast-light') return 'light';
  if (kind === 'vscode-dark' || kind === 'vscode-high-contrast') return 'dark';
  const words = String(colorScheme).split(/\s+/);
  const dark = words.includes('dark');
  if (dark !== words.includes('light')) return dark ? 'dark' : 'light';
  return null;
}

/**
 * The scheme to draw in (pure; exported for tests).
 * @param {string|null} theme the theme attribute ('auto', 'light', 'dark', absent or invalid)
 * @param {'light'|'dark'|null} host hostScheme's answer
 * @param {boolean} prefersDark whether prefers-color-scheme: dark matches
 * @returns {'light'|'dark'}
 */
export function resolveScheme(theme, host, prefersDark) {
  if (theme === 'light' || theme === 'dark') return theme;
  return host ?? (prefersDark ? 'dark' : 'light');
}
