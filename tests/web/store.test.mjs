// SPDX-License-Identifier: Apache-2.0
// The page's store (web/store.js), in node: every setter tells the subscribers what
// changed, states are frozen once stored (a write that bypasses the setters throws),
// A stays as it was pinned while the state is edited, and a link survives the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../wasm/stepcalc.js';
import { useCatalogue } from '../../web/catalogue.js';
import { defaultState, decodeHash, encodeHash, toRequest } from '../../web/state.js';
import { createStore } from '../../web/store.js';

const calc = await load();
useCatalogue(calc.catalogue());

/** A store and the changes its subscriber saw, each with the state's tp at that moment. */
function recorded(...args) {
  const store = createStore(...args);
  const seen = [];
  const stop = store.subscribe((change, s) => seen.push([change, s.state.tp]));
  return { store, seen, stop };
}

test('each setter tells the subscribers, in order, after the change is made', () => {
  const { store, seen, stop } = recorded();
  const first = store.state;
  store.set({ tp: 2 });
  store.setRow('decode', 0, 0, 4096);
  store.setPinned(store.state);
  store.replace({ ...defaultState(), tp: 4 });
  store.setGood({ state: store.state, request: toRequest(store.state), result: { step_time_us: 1 } });
  store.setPinned(null);
  assert.deepEqual(seen, [['edited', 2], ['edited', 2], ['pinned', 2], ['replaced', 4], ['priced', 4], ['pinned', 4]]);
  assert.equal(store.state.decode[0][0], 512, 'the replaced state');
  assert.equal(first.tp, 1, 'a stored state never changes: set makes a new one');

  const other = [];
  const stopOther = store.subscribe((change) => other.push(change));
  stop();
  store.set({ gpu: 'B200' });
  assert.equal(seen.length, 6, 'no call after unsubscribing');
  assert.deepEqual(other, ['edited']);
  stopOther();
});

test('the state changes only through the setters: stored states are frozen, unknown fields refused', () => {
  const { store, seen } = recorded();
  assert.throws(() => { store.state.tp = 8; }, TypeError);
  assert.throws(() => { store.state.hw.TFlopsPeak = 1; }, TypeError);
  assert.throws(() => { store.state.decode[0][0] = 1; }, TypeError);
  assert.throws(() => store.state.decode.push([1, 1]), TypeError);
  assert.throws(() => { store.state = defaultState(); }, TypeError);
  assert.throws(() => store.set({ bogus: 1 }), /no field bogus/);
  assert.throws(() => store.setRow('prefill', 5, 0, 1), RangeError);
  assert.deepEqual(seen, [], 'nothing changed, nothing told');
  assert.deepEqual(store.state, defaultState());

  store.set({ serving: { input: 1, output: 2, load: 'concurrency', concurrency: 3, rate: 4, requests: 0, usd: 0 } });
  assert.throws(() => { store.state.serving.input = 9; }, TypeError);
  store.set({ serving: undefined });
  assert.equal('serving' in store.state, false, 'serving: undefined removes the workload');
});

test('A is pinned through the store and stays as it was while the state is edited', () => {
  const { store } = recorded();
  store.setPinned(store.state);
  store.set({ tp: 2, hw: { TFlopsPeak: 500 } });
  store.setRow('prefill', 0, 1, 7);
  assert.equal(store.pinned.state.tp, 1);
  assert.deepEqual(store.pinned.state.hw, {});
  assert.equal(store.pinned.state.prefill[0][1], 2048);
  assert.equal(store.state.prefill[0][1], 7);
  assert.throws(() => { store.pinned.state.tp = 3; }, TypeError);
  // replace keeps A unless it is given one (a link), or null (a link without A).
  store.replace(defaultState());
  assert.equal(store.pinned.state.tp, 1);
  store.replace(defaultState(), null);
  assert.equal(store.pinned, null);
});

test('a share link survives the store unchanged, A included', () => {
  const links = [
    'v=1&m=llama-3.1-8b-instruct&g=H100&tp=1&mode=measured&p=0.2048&d=512~64*64',
    'v=1&m=qwen3-14b&g=B200&tf=989&ef=0.8&tp=2&mode=corrected&cr=%7B%22params%22%3A%7B%22cpu_step_us%22%3A900%7D%7D' +
      '&p=0.2048&dt=5.1,6.2&sv=2048_64_c16_n0_u2.5' +
      '&a=v%3D1%26m%3Dqwen3-14b%26g%3DH100%26tp%3D1%26mode%3Dblis-v2%26p%3D0.2048%26d%3D512',
  ];
  for (const link of links) {
    const { state, pinned } = decodeHash(`#${link}`);
    const store = createStore(state, pinned ?? null);
    assert.equal(encodeHash(store.state, store.pinned?.state), link);
    const edited = createStore(state, pinned ?? null);
    edited.set({ tp: 4 });
    edited.set({ tp: state.tp });
    assert.equal(encodeHash(edited.state, edited.pinned?.state), link, 'an edit and its undo');
  }
});
