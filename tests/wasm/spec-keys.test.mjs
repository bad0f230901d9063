// SPDX-License-Identifier: Apache-2.0
// A config as the page keeps it (web/model-shape.js trimConfig: the resolved shape, the note
// keys and the catalogue's spec_keys) prices as the config itself does, in measured too: every
// shipped config (the presets' and the ledger's, ModelOpt's hf_quant_config.json folded in as
// tools/validate-ledger.mjs folds it). And every key core/io/model_spec_config.cpp reads from a
// config is in spec_keys, so a key added to the reader without the list fails here; and a
// config is recognised as a preset only when its spec (resolveModel().spec) is the preset's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { load } from '../../wasm/stepcalc.js';
import { useCatalogue } from '../../web/catalogue.js';
import { trimConfig, matchingPreset } from '../../web/model-shape.js';

const root = new URL('../../', import.meta.url);
const calc = await load();
const facts = calc.catalogue();
useCatalogue(facts);
await calc.loadKernels('H100');

const read = (file) => JSON.parse(readFileSync(new URL(file, root), 'utf8'));

/** Every shipped config: [name, config]. */
function shippedConfigs() {
  const out = readdirSync(new URL('presets/models/', root)).map((f) => [f, read(`presets/models/${f}`)]);
  const dir = 'data/silicon/model_configs/';
  for (const f of readdirSync(new URL(dir, root)).filter((n) => n.endsWith('_config.json') &&
    !n.endsWith('_hf_quant_config.json'))) {
    const config = read(dir + f);
    if (config.torch_dtype === undefined && config.dtype === undefined && config.text_config === undefined) {
      config.torch_dtype = 'bfloat16';
    }
    const quant = dir + f.replace(/_config\.json$/, '_hf_quant_config.json');
    if (existsSync(new URL(quant, root))) {
      const q = read(quant);
      config.quantization_config = { quant_method: 'modelopt', ...(q.quantization ?? q) };
    }
    out.push([f, config]);
  }
  return out;
}

const step = {
  prefill_requests: [{ progress_index: 1000, num_new_prefill_tokens: 2048 }],
  decode_requests: Array.from({ length: 16 }, (_, i) => ({ progress_index: 500 + 4000 * i })),
};

/** The result without the model's own description (name, source): what the price is made of; or the refusal. */
function priced(model, mode, tp) {
  try {
    const result = calc.price({ model, model_name: 'm', gpu: 'H100', tp, mode, step });
    delete result.model;
    return result;
  } catch (error) {
    return { code: error.code, path: error.path, message: error.message };
  }
}

test('a config reduced as the page keeps it prices as the config, in every mode', () => {
  const configs = shippedConfigs();
  assert.ok(configs.length >= 30, `${configs.length} configs`);
  let moe = 0;
  let quantized = 0;
  for (const [name, config] of configs) {
    const kept = trimConfig(calc, config);
    for (const mode of facts.modes.map((m) => m.name)) {
      for (const tp of [1, 2, 8]) {
        const full = priced(config, mode, tp);
        assert.deepEqual(priced(kept, mode, tp), full, `${name} in ${mode} at TP ${tp}`);
        if (mode === 'measured' && tp === 1 && full.measured) {
          moe += full.measured.operators.some((op) => op.kind === 'moe');
          quantized += full.measured.operators.some((op) => op.kind === 'gemm' && op.dtype !== 'bf16');
        }
      }
    }
  }
  // The check covers what the shape alone loses: experts and quantized weights.
  assert.ok(moe >= 10 && quantized >= 5, `${moe} MoE configs, ${quantized} quantized`);
});

test('every key model_spec_config.cpp reads from a config is in the catalogue\'s spec_keys', () => {
  const source = readFileSync(new URL('core/io/model_spec_config.cpp', root), 'utf8');
  const { merged, top_only: topOnly } = facts.model_config.spec_keys;
  // Keys read through the merged view (f.integer("k"), f.flag, f.text_of, f.has, f.find) or
  // in loops over f.integer(key); keys at the top level (config.at_key("k")).
  const viaFields = [...source.matchAll(/\bf\.(?:integer|flag|text_of|has|find)\("(\w+)"/g)].map((m) => m[1]);
  const loops = [...source.matchAll(/for \(const char\* key : \{([^}]*)\}\)\s*\n?\s*if \(\(?[^\n]*f\.integer\(key/g)]
    .flatMap((m) => [...m[1].matchAll(/"(\w+)"/g)].map((k) => k[1]));
  const top = [...source.matchAll(/\bconfig\.at_key\("(\w+)"\)/g)].map((m) => m[1]).filter((k) => k !== 'text_config');
  assert.ok(viaFields.length >= 30 && loops.length >= 6 && top.length >= 2,
    `the scan found ${viaFields.length}, ${loops.length} and ${top.length} keys: has the reader changed form?`);
  for (const key of [...viaFields, ...loops]) assert.ok(merged.includes(key), `${key} is not in spec_keys.merged`);
  for (const key of top) assert.ok(topOnly.includes(key), `${key} is not in spec_keys.top_only`);
});

test('a config is shown as a preset only when it prices as that preset: a quantized checkpoint of it is not', () => {
  const presets = calc.presets();
  const match = (config) => matchingPreset(calc, presets, trimConfig(calc, config), config);
  // Each preset's own config is that preset (or one with the same config: DeepSeek-V3 and -R1).
  for (const f of readdirSync(new URL('presets/models/', root))) {
    const config = read(`presets/models/${f}`);
    const found = match(config);
    assert.ok(found, f);
    assert.deepEqual(trimConfig(calc, read(`presets/models/${found}.json`)), trimConfig(calc, config), f);
  }
  // NVIDIA's FP8 checkpoint of Llama-3.1-70B-Instruct has the BF16 preset's shape and notes;
  // its hf_quant_config.json makes it another model (FP8 weights and KV cache).
  const dir = 'data/silicon/model_configs/';
  const config = read(`${dir}nvidia--Llama-3.1-70B-Instruct-FP8_config.json`);
  assert.equal(match(config), 'llama-3.1-70b-instruct');
  config.quantization_config = { quant_method: 'modelopt',
    ...read(`${dir}nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json`).quantization };
  assert.equal(calc.resolveModel(config).spec.quantization.format, 'fp8');
  assert.equal(match(config), '');
});
