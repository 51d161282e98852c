// scripts/serve.mjs: MIME types, 404s, no way out of the root.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtemp, mkdir, writeFile, symlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServer, CSP } from '../../scripts/serve.mjs';

let tmp;
let server;

/** A raw GET (no URL normalisation by the client, so "/../x" reaches the server as is). */
function get(pathname, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: server.port, path: pathname, method },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-serve-'));
  const root = path.join(tmp, 'site');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await writeFile(path.join(root, 'index.html'), '<!doctype html><title>t</title>');
  await writeFile(path.join(root, 'app.js'), 'var a = 1;');
  await writeFile(path.join(root, 'core.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d]));
  await writeFile(path.join(root, 'style.css'), 'body{}');
  await writeFile(path.join(root, 'sub', 'index.html'), 'sub');
  await writeFile(path.join(tmp, 'secret.txt'), 'secret');
  await symlink(path.join(tmp, 'secret.txt'), path.join(root, 'link.txt'));
  server = await startServer({ dir: root, port: 0 });
});

after(async () => {
  await server?.close();
  await rm(tmp, { recursive: true, force: true });
});

test('listens on a free port and reports its URL', () => {
  assert.ok(server.port > 0);
  assert.equal(server.url, `http://127.0.0.1:${server.port}/`);
});

test('serves files with their MIME types and the page CSP', async () => {
  const cases = {
    '/': 'text/html; charset=utf-8',
    '/index.html': 'text/html; charset=utf-8',
    '/app.js': 'text/javascript; charset=utf-8',
    '/core.wasm': 'application/wasm',
    '/style.css': 'text/css; charset=utf-8',
    '/sub/': 'text/html; charset=utf-8',
  };
  for (const [p, type] of Object.entries(cases)) {
    const r = await get(p);
    assert.equal(r.status, 200, p);
    assert.equal(r.headers['content-type'], type, p);
    assert.equal(r.headers['content-security-policy'], CSP, p);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', p);
  }
  assert.equal((await get('/app.js?v=1')).body, 'var a = 1;');
  const head = await get('/app.js', 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
});

test('404 for missing files; 405 for other methods', async () => {
  assert.equal((await get('/nope.js')).status, 404);
  assert.equal((await get('/sub/nope')).status, 404);
  assert.equal((await get('/index.html', 'POST')).status, 405);
});

test('no directory traversal, encoded or not, and no symlink escape', async () => {
  for (const p of [
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/sub/../../secret.txt',
    '/%2e%2e%2fsecret.txt',
    '/..%5csecret.txt',
    '/%E0%A4%A',
    '/index.html%00.js',
    '/link.txt',
  ]) {
    const r = await get(p);
    assert.equal(r.status, 404, p);
    assert.doesNotMatch(r.body, /secret/, p);
  }
});
