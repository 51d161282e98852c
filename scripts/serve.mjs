#!/usr/bin/env node
// A tiny static file server for the built page (node's http module only, no dependencies).
//
//   node scripts/serve.mjs --dir dist --port 8000 --host 127.0.0.1
//
// Importable by tests: `const s = await startServer({ dir, port: 0 }); ... await s.close();`
// (port 0 = a free port chosen by the OS; s.url is the page's address).
// Serves GET and HEAD only, with the MIME types below; paths are resolved and must stay inside
// the root (also through symlinks); anything else is 404. Every response carries the
// Content-Security-Policy the page is written for, so a served page proves it runs under it.
import http from 'node:http';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";

export const MIME_TYPES = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
});

function send(res, status, text, extra = {}) {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

/**
 * Maps a request path to a file inside `root` (a realpath), or null.
 * @param {string} root absolute, symlinks resolved
 * @param {string} urlPath the request target, e.g. "/index.html?x=1"
 */
export async function resolveInside(root, urlPath) {
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(urlPath, 'http://localhost').pathname);
  } catch {
    return null; // malformed %-escape
  }
  if (pathname.includes('\0')) return null;
  let candidate = path.resolve(root, `.${path.posix.sep}${pathname}`);
  if (!isInside(root, candidate)) return null;
  try {
    let info = await stat(candidate);
    if (info.isDirectory()) {
      candidate = path.join(candidate, 'index.html');
      info = await stat(candidate);
    }
    if (!info.isFile()) return null;
    const real = await realpath(candidate);
    return isInside(root, real) ? real : null;
  } catch {
    return null;
  }
}

function isInside(root, p) {
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * @param {{dir: string, port?: number, host?: string}} options
 * @returns {Promise<{server: http.Server, url: string, port: number, close: () => Promise<void>}>}
 */
export async function startServer({ dir, port = 0, host = '127.0.0.1' }) {
  const root = await realpath(path.resolve(dir));
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    const file = await resolveInside(root, req.url ?? '/');
    if (!file) {
      send(res, 404, 'not found\n');
      return;
    }
    const type = MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    const { size } = await stat(file);
    res.writeHead(200, {
      'Content-Type': type,
      'Content-Length': size,
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file)
      .on('error', () => res.destroy())
      .pipe(res);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actual = server.address().port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    port: actual,
    url: `http://${shownHost}:${actual}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const usage =
    'usage: node scripts/serve.mjs [--dir DIR (dist)] [--port PORT (8000)] [--host HOST (127.0.0.1)]';
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        dir: { type: 'string', default: 'dist' },
        port: { type: 'string', default: '8000' },
        host: { type: 'string', default: '127.0.0.1' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (e) {
    console.error(`serve: ${e.message}\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`serve: --port ${values.port} is not a port number`);
    process.exit(2);
  }
  try {
    const s = await startServer({ dir: values.dir, port, host: values.host });
    console.log(`Serving ${path.resolve(values.dir)} at ${s.url}  (Ctrl+C to stop)`);
  } catch (e) {
    console.error(`serve: ${e.message}`);
    process.exit(1);
  }
}
