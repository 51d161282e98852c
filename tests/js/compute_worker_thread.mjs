// The page's compute worker script (web/src/compute/compute_worker.js) in a node worker thread,
// for tests/js/workers.test.mjs: this file gives it what a browser's worker scope has
// (importScripts, postMessage, onmessage), then imports it. workerData.fail makes it fail as a
// worker can: 'core' (its core does not start: it says {failed}), 'script' (its script throws
// while it loads: an error event).
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from './module.mjs';

const require = createRequire(import.meta.url);
const fail = workerData?.fail;

globalThis.importScripts = (name) => {
  if (fail === 'script') throw new Error(`${name} did not load`);
  const create = require(path.join(root, 'build/wasm', name));
  globalThis.createMhaCore =
    fail === 'core' ? () => Promise.reject(new Error('out of memory')) : create;
};
globalThis.onmessage = null;
globalThis.postMessage = (message, transfer) => parentPort.postMessage(message, transfer);
parentPort.on('message', (data) => globalThis.onmessage?.({ data }));

await import('../../web/src/compute/compute_worker.js');
