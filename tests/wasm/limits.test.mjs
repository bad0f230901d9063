// SPDX-License-Identifier: Apache-2.0
// The loader's door (wasm/stepcalc.js): sizes are checked against the core's limits
// before anything is copied into the module, a trap becomes a StepCalcError, and an
// instance that trapped is dropped so the next load() makes a fresh one. The first
// tests run on a copy of the module whose memory may grow only to 24 MiB: an input
// copied before its size is checked makes it trap, as a >2 GB call does on the real one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { load, StepCalcError } from '../../wasm/stepcalc.js';
import { smallMemoryModule } from '../support/small-memory.mjs';

const MiB = 1 << 20;
const DOCUMENT_LIMIT = 16 * MiB; // docs/INPUT.md; the loader reads it from the core
const cli = fileURLToPath(new URL('../../build/stepcalc', import.meta.url));
const request = { model: 'llama-3.1-8b-instruct', step: { decode_requests: [{ progress_index: 512 }] } };
const cliStepTime = JSON.parse(execFileSync(cli, ['price', '-'], { input: JSON.stringify(request) })).step_time_us;

const small = await load({ wasmBinary: smallMemoryModule(384) });

function refused(run, code, path) {
  assert.throws(run, (e) => {
    assert.ok(e instanceof StepCalcError, `${e?.name}: ${e?.message?.slice(0, 200)}`);
    assert.deepEqual({ code: e.code, path: e.path }, { code, path });
    return true;
  });
}

test('oversized text, objects, modes and sweeps are refused before they reach the module', () => {
  refused(() => small.price('x'.repeat(1e8)), 'too_large', '');
  refused(() => small.price('€'.repeat(6e6)), 'too_large', ''); // 6M characters, 18 MB as UTF-8
  refused(() => small.price({ ...request, id: 'x'.repeat(17 * MiB) }), 'too_large', '');
  refused(() => small.priceAll([request], { mode: '€'.repeat(1e8) }), 'out_of_range', 'mode');
  refused(() => small.priceAll(['€'.repeat(6e6)]), 'too_large', '');
  refused(() => small.sweep(request, 'tp', new Array(4e6).fill(1)), 'out_of_range', 'values');
  refused(() => small.sweep('x'.repeat(1e8), 'tp', [1]), 'too_large', '');
  assert.equal(small.price(request).step_time_us, cliStepTime, 'the module still prices');
});

test('bad options are StepCalcError, not TypeError', () => {
  refused(() => small.priceAll([request], null), 'type_error', 'options');
  refused(() => small.priceAll([request], 5), 'type_error', 'options');
  refused(() => small.priceAll([request], { mode: 7 }), 'type_error', 'mode');
  refused(() => small.priceAll([request], { mode: 'm'.repeat(1025) }), 'out_of_range', 'mode');
  assert.equal(small.priceAll([request], undefined)[0].step_time_us, cliStepTime);
  assert.equal(small.priceAll([request], {})[0].step_time_us, cliStepTime);
});

test('a trap becomes StepCalcError; the instance is dropped and load() makes a fresh one', async () => {
  // 1.4 MB of JSON text, within every limit: priced by the real module, out of memory in this
  // one. (As an object it is priced here too: its step reaches the module as numbers, not text.)
  const big = { ...request, step: { decode_requests: new Array(60000).fill({ progress_index: 512 }) } };
  refused(() => small.price(JSON.stringify(big)), 'internal_error', '');
  refused(() => small.price(request), 'internal_error', ''); // the trapped instance stays refused
  refused(() => small.presets(), 'internal_error', '');
  const fresh = await load();
  assert.notEqual(fresh, small, 'load() returned the instance that trapped');
  assert.equal(fresh.price(request).step_time_us, cliStepTime);
  assert.equal(fresh.price(big).tokens.decode, 60000);
  assert.equal(await load(), fresh, 'a healthy instance is shared');
});

/** JSON text of exactly `bytes` UTF-8 bytes, padded with `pad` (1-4 bytes) in a config value. */
function documentOf(bytes, pad) {
  const head = '{"model":{"num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,'
    + '"torch_dtype":"bfloat16","pad":"';
  const tail = '"},"step":{"decode_requests":[{"progress_index":512}]}}';
  const room = bytes - Buffer.byteLength(head + tail);
  const padBytes = Buffer.byteLength(pad);
  return head + pad.repeat(Math.floor(room / padBytes)) + 'x'.repeat(room % padBytes) + tail;
}

test('the size limit is exact in UTF-8 bytes, as in the core, whatever the characters', async () => {
  const calc = await load();
  // At the limit: priced (surrogate pairs, the hardest count; pricing 16 MiB takes ~1 s).
  const atLimit = documentOf(DOCUMENT_LIMIT, '😀');
  assert.equal(Buffer.byteLength(atLimit), DOCUMENT_LIMIT);
  assert.ok(calc.price(atLimit).step_time_us > 0, 'a document at the limit is priced');
  for (const pad of ['x', 'é', '€', '😀']) {
    refused(() => calc.price(documentOf(DOCUMENT_LIMIT + 1, pad)), 'too_large', '');
  }
});

test('presets() returns a copy: changing it changes nothing for the next caller', async () => {
  const calc = await load();
  const first = calc.presets();
  const name = first.models[0].name;
  first.models[0].name = 'changed';
  first.models.length = 0;
  first.modes.push('evil');
  const second = calc.presets();
  assert.equal(second.models[0].name, name);
  assert.ok(!second.modes.includes('evil'));
  assert.ok(second.models.length > 1);
});
