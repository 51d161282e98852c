// web/src/explain/masks.js: the random-embeddings mode's masks as the core's request fields. The
// sliding-window band is the core's own (windowMask of build/wasm/mha_wasm_core.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskFields, toggleCell, maskDescription } from '../../web/src/explain/masks.js';
import { loadModule } from './module.mjs';

const core = await loadModule('mha_wasm_core.js');
const windowMask = (n, window) => core.windowMask({ n, window });

test("masks as the core's boolean fields (true = may not attend)", () => {
  assert.deepEqual(maskFields({ mask: 'none' }, 3), {});
  assert.deepEqual([...maskFields({ mask: 'padding', pad: 2 }, 4).key_padding_mask], [0, 0, 1, 1]);
  assert.deepEqual([...maskFields({ mask: 'padding', pad: 0 }, 3).key_padding_mask], [0, 0, 0]);
  // |i - j| > 1 masked, for n = 4.
  assert.deepEqual(
    [...maskFields({ mask: 'window', window: 1 }, 4, windowMask).attn_mask],
    [0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0],
  );
  assert.deepEqual(
    [...maskFields({ mask: 'window', window: 0 }, 2, windowMask).attn_mask],
    [0, 1, 1, 0],
  );
  const drawn = maskFields(
    {
      mask: 'drawn',
      drawn: [
        [0, 1],
        [2, 2],
      ],
    },
    3,
  );
  assert.deepEqual([...drawn.attn_mask], [0, 1, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(toggleCell([[0, 1]], 0, 1), []);
  assert.deepEqual(toggleCell([[2, 0]], 0, 1), [
    [0, 1],
    [2, 0],
  ]);
  assert.equal(
    maskDescription({ causal: true, mask: 'window', window: 2 }, 5),
    'causal (key j > query i masked) + sliding window: |i − j| ≤ 2',
  );
  assert.equal(maskDescription({ causal: false, mask: 'none' }, 5), 'no mask');
});
