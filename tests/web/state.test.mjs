// SPDX-License-Identifier: Apache-2.0
// The page's state and URL codec, in node (no browser): round trips and refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../wasm/stepcalc.js';
import { useCatalogue, MODE, catalogue } from '../../web/catalogue.js';
import { defaultState, toRequest, fromRequest, encodeHash, decodeHash, encodeRuns,
  decodeRuns } from '../../web/state.js';

const facts = (await load()).catalogue();
useCatalogue(facts);

/** Runs `check` with the page's catalogue changed by `changes`, then restores the core's. */
function withCatalogue(changes, check) {
  useCatalogue({ ...facts, ...changes });
  try {
    check();
  } finally {
    useCatalogue(facts);
  }
}

test('row runs round-trip and compress progressions', () => {
  let seed = 7;
  const rand = (n) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (let trial = 0; trial < 200; trial++) {
    const rows = Array.from({ length: rand(40) }, () => [rand(3) ? rand(5000) : 64, rand(2) ? 1 : rand(9)]);
    assert.deepEqual(decodeRuns(encodeRuns(rows), 2, 'p'), rows);
  }
  assert.equal(encodeRuns(Array.from({ length: 64 }, (_, i) => [512 + 64 * i])), '512~64*64');
  assert.equal(encodeRuns(Array.from({ length: 100 }, () => [1000])), '1000*100');
  assert.equal(encodeRuns([[0, 2048], [2048, 2048], [4096, 904]]), '0.2048,2048.2048,4096.904');
  assert.equal(encodeRuns([[9], [5], [1], [1]]), '9~-4*3,1');
  assert.deepEqual(decodeRuns('9~-4*3,1', 1, 'd'), [[9], [5], [1], [1]]);
});

test('the default state and an edited one survive the hash', () => {
  const s = defaultState();
  assert.deepEqual(decodeHash(`#${encodeHash(s)}`).state, s);
  assert.equal(encodeHash(s), 'v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&p=0.2048&d=512~64*64');
  const edited = {
    ...s, model: { num_hidden_layers: 2, hidden_size: 512, num_attention_heads: 8, num_key_value_heads: 8,
      intermediate_size: 1024,
      vocab_size: 0, bytes_per_param: 0.5, num_local_experts: 8 },
    modelName: 'tiny & odd=name#1', hw: { TFlopsPeak: 1e3 / 3, bwEfficiencyFactor: 0.9 }, tp: 8, mode: 'corrected',
    corrected: { switches: { tp_allreduce: false }, params: { cpu_step_us: 1500 } },
    prefill: [[0, 1], [7, 9]], decode: [[5, 1], [6, 2]],
  };
  const back = decodeHash(`#${encodeHash(edited)}`).state;
  assert.deepEqual(back, edited);
  assert.deepEqual(toRequest(back), toRequest(edited));
});

test('requests in the CLI format become states and back', () => {
  const request = {
    model: 'qwen3-14b', gpu: 'H100', hardware: { BwPeakTBs: 3 }, tp: 2, mode: 'blis-v2',
    step: { prefill_requests: [{ progress_index: 10, num_new_prefill_tokens: 20 }],
      decode_requests: [{ progress_index: 3 }, { progress_index: 4, num_new_decode_tokens: 2 }] },
  };
  assert.deepEqual(toRequest(fromRequest(request)), request);
  assert.deepEqual(decodeHash(`#json=${encodeURIComponent(JSON.stringify(request))}`).request, request);
  assert.throws(() => fromRequest({ ...request, bogus: 1 }), { path: 'bogus' });
  assert.throws(() => fromRequest({ ...request, step: { decode_requests: [{ progress_index: '3' }] } }),
    { path: 'step.decode_requests[0].progress_index' });
  assert.throws(() => fromRequest([]), { path: 'request' });
});

/**
 * Runs `fn` and counts its work: the array elements it adds by push (the rows a link
 * expands to) and the characters it hands to JSON.parse. Returns {pushed, parsed, error}.
 */
function counted(fn) {
  const { push } = Array.prototype;
  const { parse } = JSON;
  const work = { pushed: 0, parsed: 0, error: null };
  Array.prototype.push = function count(...items) {
    work.pushed += items.length;
    return push.apply(this, items);
  };
  JSON.parse = (text, reviver) => {
    work.parsed += String(text).length;
    return parse(text, reviver);
  };
  try {
    fn();
  } catch (error) {
    work.error = error;
  } finally {
    Array.prototype.push = push;
    JSON.parse = parse;
  }
  return work;
}

test('hostile hashes are refused with a path, after a bounded amount of work', () => {
  const bad = ['#json=%7B', '#json=%E0%A4%A', '#v=2&m=x', '#v=1&d=1*999999', '#v=1&d=1*70000', '#v=1&p=1', '#v=1&d=1e5',
    '#v=1&d=-5', '#v=1&ms=1_2', '#v=1&ms=1_2_3_4_5_6_x', '#v=1&cr=[1]', `#v=1&d=${'1,'.repeat(70000)}1`,
      `#json=${'['.repeat(200001)}`];
  for (const hash of bad) {
    const { pushed, parsed, error } = counted(() => decodeHash(hash));
    assert.ok(error && typeof error.path === 'string' && error.message.length > 0, hash.slice(0, 30));
    // Refused before it is expanded: no rows beyond a few, no JSON beyond the hash itself.
    assert.ok(pushed <= 16, `${hash.slice(0, 30)}: ${pushed} elements pushed`);
    assert.ok(parsed <= 16, `${hash.slice(0, 30)}: ${parsed} characters parsed as JSON`);
  }
  // The count sees the work a link does: a good link of 65,536 rows pushes each of them.
  const big = counted(() => decodeHash('#v=1&m=llama-3.1-8b-instruct&p=&d=1~1*65536'));
  assert.equal(big.error, null);
  assert.ok(big.pushed >= 65536, `${big.pushed} elements pushed`);
  assert.equal(decodeHash(''), null);
  assert.equal(decodeHash('#section-2'), null);
});

test('a link or request without a mode gets the catalogue\'s default mode; a fresh page starts in measured', () => {
  assert.equal(decodeHash('#v=1&m=qwen3-14b').state.mode, facts.default_mode);
  assert.equal(fromRequest({ model: 'qwen3-14b', step: {} }).mode, facts.default_mode);
  assert.equal(defaultState().mode, MODE.measured);
  // The default is read from the catalogue, not typed in the page: another core's default is followed.
  const other = facts.modes.map((m) => m.name).find((m) => m !== facts.default_mode);
  withCatalogue({ default_mode: other }, () => {
    assert.equal(decodeHash('#v=1&m=qwen3-14b').state.mode, other);
    assert.equal(fromRequest({ model: 'qwen3-14b', step: {} }).mode, other);
    assert.equal(decodeHash('#v=1&m=qwen3-14b&mode=blis-v2').state.mode, 'blis-v2', 'a link\'s own mode stays');
  });
});

test('the link\'s hardware keys are the core\'s hardware fields by position; old links load as before', () => {
  assert.deepEqual(facts.hardware_fields, ['TFlopsPeak', 'BwPeakTBs', 'bwEfficiencyFactor', 'perLayerOverhead']);
  const old = 'v=1&m=qwen3-14b&g=H100&tf=989&bw=3.35&ef=0.8&oh=120&tp=1&mode=blis-v2&p=0.2048&d=512';
  const { state } = decodeHash(`#${old}`);
  assert.deepEqual(state.hw, { TFlopsPeak: 989, BwPeakTBs: 3.35, bwEfficiencyFactor: 0.8, perLayerOverhead: 120 });
  assert.equal(encodeHash(state), old);
  assert.deepEqual(toRequest(fromRequest({ model: 'qwen3-14b', hardware: state.hw, step: {} })).hardware, state.hw);
});

test('a catalogue whose hardware fields differ in number from the link\'s keys fails loudly', () => {
  withCatalogue({ hardware_fields: [...facts.hardware_fields, 'MemoryGiB'] }, () => {
    assert.throws(() => encodeHash(defaultState()), /link format keeps 4 hardware fields.*lists 5/);
    assert.throws(() => decodeHash('#v=1&m=qwen3-14b'), /link format keeps 4 hardware fields/);
  });
  withCatalogue({ hardware_fields: facts.hardware_fields.slice(1) }, () => {
    assert.throws(() => fromRequest({ model: 'qwen3-14b', hardware: {}, step: {} }), /lists 3/);
  });
  assert.equal(decodeHash('#v=1&m=qwen3-14b&tf=2').state.hw.TFlopsPeak, 2, 'the core\'s catalogue is back');
});

test('the page refuses a catalogue that lacks a mode it has behaviour for', () => {
  for (const name of Object.values(MODE)) {
    const modes = facts.modes.filter((m) => m.name !== name);
    assert.throws(() => useCatalogue({ ...facts, modes }), new RegExp(`modes the core does not have: ${name}`));
    assert.deepEqual(catalogue.modes, facts.modes, 'the refused catalogue was not taken');
  }
});

test('a link that names no step rows prices the page\'s default step; one without v= is said, not dropped', () => {
  const base = defaultState();
  const partial = decodeHash('#v=1&m=llama-3.1-70b-instruct&g=H100&tp=4').state;
  assert.equal(partial.model, 'llama-3.1-70b-instruct');
  assert.equal(partial.tp, 4);
  assert.deepEqual(partial.prefill, base.prefill);
  assert.deepEqual(partial.decode, base.decode);
  assert.ok(partial.prefill.length + partial.decode.length > 0);
  // Naming one list keeps exactly the rows named.
  const decodesOnly = decodeHash('#v=1&m=llama-3.1-8b-instruct&d=100').state;
  assert.deepEqual(decodesOnly.prefill, []);
  assert.deepEqual(decodesOnly.decode, [[100, 1]]);
  // Settings without the format: an error naming them; an anchor is no state.
  assert.throws(() => decodeHash('#m=llama-3.1-70b-instruct&g=H100&tp=4'),
    (e) => e.path === 'v' && /\(m, g, tp\) were not applied/.test(e.message));
  assert.equal(decodeHash('#calibrate'), null);
  assert.equal(decodeHash('#serving'), null);
});

test('a link\'s TP that is not a whole number is refused in words, not as "not null"', () => {
  for (const tp of ['abc', '', '1.5', '-2', '1e3']) {
    assert.throws(() => decodeHash(`#v=1&m=llama-3.1-8b-instruct&tp=${tp}`),
      (e) => e.path === 'tp' && /is not a whole number/.test(e.message) && !/null/.test(e.message), tp);
  }
  assert.equal(decodeHash('#v=1&m=llama-3.1-8b-instruct&tp=4').state.tp, 4);
});

test('expert- and data-parallel layouts: in the request and the link only when set, refused in words when bad', () => {
  const one = defaultState();
  assert.equal('ep' in toRequest(one), false, 'a one-engine request reads as it always did');
  assert.equal('dp' in toRequest(one), false);
  assert.doesNotMatch(encodeHash(one), /&(ep|dp)=/);
  const moe = { ...defaultState(), model: 'qwen3-30b-a3b', tp: 2, ep: 4, dp: 2 };
  const req = toRequest(moe);
  assert.deepEqual([req.tp, req.ep, req.dp], [2, 4, 2]);
  assert.deepEqual([fromRequest(req).ep, fromRequest(req).dp], [4, 2]);
  const hash = encodeHash(moe);
  assert.match(hash, /&tp=2&ep=4&dp=2&mode=/);
  const back = decodeHash(`#${hash}`).state;
  assert.deepEqual([back.tp, back.ep, back.dp], [2, 4, 2]);
  assert.deepEqual(toRequest(back), req);
  for (const [key, value] of [['ep', 'abc'], ['dp', '1.5'], ['dp', '-2']]) {
    assert.throws(() => decodeHash(`#v=1&m=qwen3-30b-a3b&tp=2&${key}=${value}`),
      (e) => e.path === key && /not a whole number/.test(e.message), `${key}=${value}`);
  }
  assert.throws(() => decodeHash('#m=qwen3-30b-a3b&dp=2'), (e) => e.path === 'v' && /dp/.test(e.message));
});
