// SPDX-License-Identifier: Apache-2.0
// How the accuracy ledger reads a measured run's row (tools/validate-ledger.mjs requestOf,
// layoutOf): the layout as vLLM ran it, and a reason instead of a guess for what stepcalc does
// not simulate. Made-up rows in the CSV's columns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutOf, requestOf, subsetOf } from '../../tools/validate-ledger.mjs';

/** A Qwen3-235B-A22B-FP8 row on H200 with the given columns changed. */
const row = (columns) => ({
  id: 'made-up', backend: 'vllm', backend_version: '0.12.0', model_path: 'Qwen/Qwen3-235B-A22B-FP8',
  system: 'h200_sxm', precision: 'fp8', mode: 'agg', isl: '1000', osl: '100', gemm_quant_mode: 'fp8',
  moe_quant_mode: 'fp8', tp_size: '2', pp_size: '1', attention_dp_size: '1', moe_tp_size: '2', moe_ep_size: '1',
  concurrency: '8', ...columns,
});

test('a row\'s layout: tp, ep and dp as written, or dp from the MoE\'s GPUs where attention_dp_size is empty', () => {
  assert.deepEqual(layoutOf(row({})), { tp: 2, ep: 1, dp: 1 });
  assert.deepEqual(layoutOf(row({ tp_size: '2', attention_dp_size: '2', moe_tp_size: '1', moe_ep_size: '4' })),
    { tp: 2, ep: 4, dp: 2 });
  // tp x attention-DP = moe_tp x moe_ep: tp 1 with the experts sliced over 2 or 4 GPUs ran 2 or 4 ranks.
  assert.deepEqual(layoutOf(row({ tp_size: '1', attention_dp_size: '', moe_tp_size: '2' })), { tp: 1, ep: 1, dp: 2 });
  assert.deepEqual(layoutOf(row({ tp_size: '2', attention_dp_size: '', moe_tp_size: '4' })), { tp: 2, ep: 1, dp: 2 });
  assert.deepEqual(layoutOf(row({ tp_size: '2', attention_dp_size: '', moe_tp_size: '1', moe_ep_size: '2' })),
    { tp: 2, ep: 2, dp: 1 });
  // A dense model's empty MoE columns: one engine.
  assert.deepEqual(layoutOf(row({ tp_size: '4', attention_dp_size: '', moe_tp_size: '', moe_ep_size: '' })),
    { tp: 4, ep: 1, dp: 1 });
  assert.match(subsetOf(row({ tp_size: '1', attention_dp_size: '', moe_tp_size: '4' })), /\| TP1 DP4$/);
  // Every GPU stepcalc has a preset for, by its AIConfigurator system name.
  for (const [system, gpu] of [['b300_sxm', 'B300'], ['gb200', 'GB200'], ['rtx_pro_6000_server', 'RTX-PRO-6000'],
    ['a100_sxm', 'A100'], ['h100_sxm', 'H100']]) {
    const onIt = requestOf(row({ system }));
    assert.ok('request' in onIt, system);
    assert.equal(onIt.request.gpu, gpu);
    assert.match(subsetOf(row({ system })), new RegExp(`\\| ${gpu} \\|`));
  }
  const mapped = requestOf(row({ tp_size: '1', attention_dp_size: '', moe_tp_size: '2' }));
  assert.ok('request' in mapped, JSON.stringify(mapped));
  assert.deepEqual([mapped.request.tp, mapped.request.ep, mapped.request.dp], [1, 1, 2]);
});

test('what the core does not simulate is a reason naming the column, never priced as something else', () => {
  const reason = (columns) => {
    const mapped = requestOf(row(columns));
    assert.ok('reason' in mapped, `priced: ${JSON.stringify(columns)}`);
    return mapped.reason;
  };
  assert.match(reason({ pp_size: '2' }), /^pp_size 2: pipeline parallelism/);
  assert.match(reason({ backend: 'sglang' }), /^backend sglang:/);
  assert.match(reason({ moe_quant_mode: 'nvfp4' }), /^moe_quant_mode nvfp4 differs from gemm_quant_mode fp8/);
  assert.match(reason({ mode: 'disagg' }), /^mode disagg:/);
  assert.match(reason({ system: 'mi300x' }), /^system mi300x/);
  assert.match(reason({ gemm_quant_mode: 'int8_sq', moe_quant_mode: 'int8_sq' }), /^gemm_quant_mode int8_sq has no/);
  // The block-scaled FP8 label is the fp8 request (the checkpoint's weight_block_size picks the kernel).
  const block = requestOf(row({ gemm_quant_mode: 'fp8_block', moe_quant_mode: 'fp8_block' }));
  assert.ok('request' in block);
  assert.equal(block.request.quantization, 'fp8');
  // ... and reads the same checkpoint as the fp8 label (NVIDIA's FP8 Llama-3.1-70B, say).
  const llama = (mode) => requestOf(row({ model_path: 'meta-llama/Llama-3.1-70B', gemm_quant_mode: mode,
    moe_quant_mode: mode, moe_tp_size: '', moe_ep_size: '' }));
  assert.equal(llama('fp8_block').model_file, llama('fp8').model_file);
  assert.match(String(llama('fp8').model_file), /FP8/);
  // The ledger's own rows: pp_size 1, vLLM, one quantization (or none for a dense BF16 model).
  assert.ok('request' in requestOf(row({})));
  assert.ok('request' in requestOf(row({ pp_size: '', backend: '' })));
});
