// SPDX-License-Identifier: Apache-2.0
// The README and NOTICE that tools/import-aic.mjs writes next to the imported tables.

export function noticeText(commit) {
  return `stepcalc: measured vLLM kernel tables (bench_data/aic/) and GPU constants (presets/gpus/)

This data is derived from NVIDIA AIConfigurator
(https://github.com/ai-dynamo/aiconfigurator, commit ${commit}),
folder aic-core/src/aiconfigurator_core/systems/ (data/<gpu>/... Parquet tables and
<gpu>.yaml system files).
Copyright (c) 2025-2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
Licensed under the Apache License, Version 2.0 (the full text is in LICENSE next to
this file). Modifications: rows filtered, re-measurements averaged, latencies converted
to microseconds and rounded to 3 significant digits, columns renamed, written as CSV;
see README.md. Only data was copied, no code.
`;
}

const TABLE_DOC = {
  gemm: '`dtype,n,k,m,latency_us`: one GEMM Y = X W with X m x k and W k x n, weights and activations of `dtype` ' +
    '(bf16; fp8 = per-tensor scaled FP8; fp8_block = FP8 with 128 x 128 block scales; nvfp4 = NVFP4 weights and ' +
    'activations, Blackwell). Averaged over several weight copies, so caches do not flatter small shapes.',
  decode_attention: '`kv_dtype,head_dim,kv_heads,heads,batch,cached_tokens,latency_us`: one decode attention kernel ' +
    'over `batch` sequences, each with `cached_tokens` tokens already in the KV cache before the new one; ' +
    '`heads`/`kv_heads` are per GPU (after tensor parallelism). Includes writing the new token\'s K/V. ' +
    'No sliding window.',
  prefill_attention: '`kv_dtype,head_dim,kv_heads,heads,batch,seq,latency_us`: one causal prefill attention kernel ' +
    'over `batch` sequences of `seq` tokens, no cached prefix; heads per GPU. No sliding window.',
  allreduce: '`tp,elements,latency_us`: one vLLM custom all-reduce of `elements` bf16 values (2 bytes each) ' +
    'over `tp` GPUs, launched inside a CUDA graph (the way vLLM\'s forward pass runs).',
  moe: '`dtype,hidden,inter,experts,topk,moe_tp,moe_ep,tokens,latency_us`: one fused-MoE layer (both expert ' +
    'GEMMs and the activation; for mxfp4 also the top-k choice from the router\'s logits, which vLLM\'s MXFP4 ' +
    'kernels make themselves) for `tokens` tokens, `experts` experts of hidden size `hidden` and intermediate ' +
    'size `inter` (full, before MoE TP), `topk` experts per token, split by `moe_tp` x `moe_ep`; power-law ' +
    'routing with exponent 1.01 (the source\'s `power_law_1.01`: a few experts get most tokens, as a trained ' +
    'router sends them). `dtype`: the experts\' weights: bf16, fp8 (per-tensor), ' +
    'fp8_block, nvfp4 (NVFP4 weights and activations), mxfp4 (MXFP4 weights, 16-bit activations: the source\'s ' +
    '`w4a16_mxfp4`), int4 (weight-only INT4, the source\'s `int4_wo`).',
  mla_prefill: '`kv_dtype,heads,batch,seq,latency_us`: DeepSeek-V3 multi-head latent attention, prefill, `heads` of ' +
    'its 128 heads on this GPU. 0.24.0 tables: the whole MLA module (projections included, BF16 weights); 0.14.0 ' +
    'tables: the attention kernel only.',
  mla_decode: '`kv_dtype,heads,batch,cached_tokens,latency_us`: as `mla_prefill`, for one decode token per sequence ' +
    'after `cached_tokens` cached tokens.',
  gdn_conv_decode: '`d_conv,head_k_dim,head_v_dim,k_heads,v_heads,d_model,batch,latency_us`: gated DeltaNet ' +
    '(linear attention, Qwen3.5 / Qwen3-Next), decode: vLLM\'s `causal_conv1d_update` over `batch` sequences ' +
    '(one new token each; conv channels 2 x k_heads x head_k_dim + v_heads x head_v_dim, kernel `d_conv`); heads ' +
    'per GPU (after tensor parallelism); `d_model` is the width of the Qwen3.5 model the shape was taken from ' +
    '(the source\'s `model_name`). The source\'s `gdn_perf` table, kernel by kernel.',
  gdn_decode: '`d_conv,head_k_dim,head_v_dim,k_heads,v_heads,d_model,batch,latency_us`: as `gdn_conv_decode`, ' +
    'for the recurrent gated delta rule (`fused_recurrent_gated_delta_rule_packed_decode`: reads and writes each ' +
    'sequence\'s v_heads x head_k_dim x head_v_dim state).',
  gdn_conv_prefill: '`d_conv,head_k_dim,head_v_dim,k_heads,v_heads,d_model,batch,seq,latency_us`: gated DeltaNet, ' +
    'prefill: `causal_conv1d_fn` over `batch` sequences of `seq` tokens, no earlier state.',
  gdn_prefill: '`d_conv,head_k_dim,head_v_dim,k_heads,v_heads,d_model,batch,seq,latency_us`: as ' +
    '`gdn_conv_prefill`, for the chunked gated delta rule: FlashInfer\'s `chunk_gated_delta_rule_flashinfer` ' +
    'where measured (H100, H200, B200, B300, GB200, GB300), else Triton\'s `chunk_gated_delta_rule_triton` ' +
    '(L40S, RTX PRO 6000).',
  dsa_prefill: '`kv_dtype,heads,batch,seq,latency_us`: DeepSeek sparse attention (DeepSeek-V3.2: MLA whose ' +
    'queries attend only to the top-2048 tokens a lightning indexer picks), prefill: the whole attention module ' +
    '(indexer, top-k selection, FlashMLA\'s sparse kernel `FLASHMLA_SPARSE`, projections with BF16 weights) over ' +
    '`batch` sequences of `seq` tokens, no cached prefix (the source\'s `step` 0); `heads` of its 128 heads on this ' +
    'GPU. The source\'s `dsa_context_module_perf`, DeepSeek-V3.2\'s rows.',
  dsa_decode: '`kv_dtype,heads,batch,cached_tokens,latency_us`: as `dsa_prefill`, for one decode token per ' +
    'sequence (the source\'s `isl` 1) after `cached_tokens` cached tokens (its `step`). The source\'s ' +
    '`dsa_generation_module_perf`.',
  kda_decode: '`d_conv,head_k_dim,head_v_dim,k_heads,v_heads,d_model,batch,latency_us`: Kimi delta attention ' +
    '(Kimi-Linear\'s linear attention), decode: `fused_kda_decode` (the conv-state update and the recurrence in one ' +
    'kernel, vLLM\'s decode path on SM90 and later) over `batch` sequences; key and value heads are the same heads, ' +
    'per GPU (Kimi-K3\'s 96 of 128 over 1, 2, 4, 8 GPUs; `d_model` 7168 is Kimi-K3\'s). The source\'s `kda_perf` ' +
    '(`kda/vllm/0.1.dev19262`: a development build of vLLM, shipped in the 0.24.0 set, docs/KERNELS.md), its ' +
    '`generation` rows of that kernel.',
  kda_prefill: '`d_conv,head_k_dim,head_v_dim,k_heads,v_heads,d_model,batch,seq,latency_us`: as `kda_decode`, ' +
    'prefill: FlashKDA\'s chunked `flashkda_fwd` over `batch` sequences of `seq` tokens, no earlier state (the ' +
    'source\'s `context` rows of that kernel).',
};

export function readmeText(commit, report, gpus) {
  const rows = report
    .map((r) => {
      const from = r.srcVersion !== r.version ? ` (from vLLM ${r.srcVersion})` : '';
      const rows = r.note ? `0 (${r.note})` : r.rows;
      const other = r.otherKernel ? ` (${r.otherKernel} shapes also by another backend)` : '';
      return `| ${r.gpu} | ${r.version}${from} | ${r.table} | ${rows}${other} | ${r.source} | ${r.repeated} |`;
    })
    .join('\n');
  const counts = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven'];
  const versions = gpus.map((g) => {
    const listed = g.versions.map((v) => `vllm-${v}`).join(', ');
    const comm = g.commVersion ? Object.entries(g.commVersion).map(([v, from]) =>
      ` (all-reduce of ${v} from vLLM ${from}, the newest ${g.name} all-reduce table)`).join('') : '';
    return `| ${g.name} | ${listed}${comm} | vllm-${g.defaultVersion} |`;
  }).join('\n');
  return `# Measured vLLM kernel tables for ${counts[gpus.length] ?? gpus.length} GPUs

GENERATED by \`tools/import-aic.mjs\` (run by hand when the data changes; re-running it
reproduces every file byte for byte). Do not edit by hand.

## Source and licence

NVIDIA AIConfigurator, https://github.com/ai-dynamo/aiconfigurator, commit
\`${commit}\`, folder \`aic-core/src/aiconfigurator_core/systems/\`: the Parquet tables
\`data/<gpu>/<op>/vllm/<version>/*.parquet\` and the system files \`<gpu>.yaml\` (whose
numbers became \`presets/gpus/<gpu>.json\`). Apache-2.0: the full text is in \`LICENSE\`,
the attribution in \`NOTICE\`. Only data was copied, no code.

## Layout

\`<gpu>/vllm-<version>/<table>.csv\`, one folder per GPU and vLLM version. Versions shipped
and the default per GPU (what a request gets without \`"kernels"\`): the newest shipped,
chosen for H100 and H200 by the accuracy ledgers (the product's docs/KERNELS.md, "Default
tables"). The GPUs AIConfigurator measured after the first five ship their newest version
only. Intel's B60 runs vLLM eagerly (its all-reduce rows are the eager ones) and its MoE
was measured with power-law routing only (the \`power_law_1.01\` rows are kept).

| GPU | versions | default |
| --- | --- | --- |
${versions}

## Columns and units

Every \`latency_us\` is the measured time of one kernel call in microseconds, under CUDA
graphs. Rows are sorted by their key columns, left to right.

${Object.entries(TABLE_DOC).map(([t, d]) => `- \`${t}.csv\` — ${d}`).join('\n')}

## Precision kept

Latencies are rounded to **3 significant digits** (e.g. \`12.2\`, \`7860\`, \`0.500\`), the
trailing zeros kept so every value shows its 3 digits. That is the precision the
measurements carry: where these tables measured the same shape twice, the two values
differ by a median 0.75% (prefill attention, H100 and H200 0.14.0, 816 pairs each; MoE
0.14.0, 3663 pairs: median 0.75%, one in ten above 5%), and neighbouring shapes that
should cost the same (GEMM m = 4096 and 4097, or 1792 and 1793) differ by several
percent. Rounding to 3 digits moves a value by at most 0.5% (0.05% at the top of a
decade), inside that noise; a 4th digit would be noise, and would make the packs about
half as large again. The packs built from these CSVs (\`tools/pack-kernels.mjs\`) are
lossless to this precision.

## What was kept and what was dropped

Kept, per GPU and version: GEMM bf16, fp8 (per-tensor scaled), fp8_block (block-scaled)
and nvfp4 where measured; decode and prefill attention with bf16 compute, KV cache bf16
or fp8, every head size measured, beam width 1; the custom all-reduce rows launched in a
CUDA graph; fused MoE with bf16, fp8, fp8_block, nvfp4, mxfp4 (W4A16) or int4 (W4A16)
weights and power-law routing (\`power_law_1.01\`); MLA (where measured) with bf16 compute and
projections; DeepSeek sparse attention (DSA, where measured: vLLM 0.24.0 on H100, H200, B200,
B300, GB200, GB300) with bf16 compute and projections, DeepSeek-V3.2's rows; Kimi delta
attention (KDA: vLLM 0.1.dev19262, a development build, on H100, H200, B200, B300, GB200, GB300,
kept in the 0.24.0 set), its fused decode and FlashKDA prefill rows.

Where a table measured the same shape with several kernels (0.24.0 names them), the one
vLLM runs by default on that GPU is kept (tools/aic-tables.mjs, \`kernelRank\`): the
FlashInfer TRT-LLM monolithic MoE kernels on Blackwell, gpt-oss's own MXFP4 MoE kernels
(not the Marlin fallback), DeepGEMM for block-scaled FP8 GEMMs, FlashAttention 3 rather
than FA4 on Hopper, TRT-LLM's prefill kernel for prefill and its decode kernel for decode
on Blackwell; Marlin and modular variants last.

Dropped, and why:
- Other quantised GEMM kinds and MoE \`w4a8_mxfp4_mxfp8\` (MXFP4 weights with MXFP8
  activations, an opt-in vLLM path): no request selects them.
- Attention with a sliding window (128, 1024, 8192 tokens): the lookups price full
  attention; a windowed layer needs a rule of its own.
- Eager (non-CUDA-graph) all-reduce rows: vLLM's decode forward pass runs in a graph.
- MoE with balanced routing (every expert the same number of tokens) and with the steeper
  power law (\`power_law_1.2\`): a trained router is skewed, and with balanced routing a
  decode batch of 32 tokens x top-4 reads every expert's weights, which the measured
  serving runs do not show (docs/KERNELS.md, "MoE routing").
- MLA with fp8 compute or fp8/nvfp4 projections; 0.14.0 MLA rows for models with 64
  heads (only DeepSeek-V3's 128 are kept, matching 0.24.0).
- DSA rows of GLM-5 (another model's shape, not priced here), with block-scaled FP8
  projections (\`gemm_type\` fp8_block: the model's own projections are priced as its GEMMs,
  as for MLA), and prefill rows after a cached prefix of 128 tokens (the source's \`step\`
  128: the tables' prefill rule is "no cached prefix"). The \`dsv4_*\` tables (DeepSeek-V4's
  attention) are not imported.
- KDA: the prefill conv \`causal_conv1d_fn_qkv3\` (0.76-0.80 ms at one token for any heads on
  H200, several times what its bytes take at HBM bandwidth: not the kernel's time, docs/KERNELS.md),
  the Triton decode pair \`causal_conv1d_update\` + \`fused_recurrent_kda_packed_decode\` (replaced
  by \`fused_kda_decode\` where measured), the \`verify\` rows (speculative decoding); L40S and RTX
  PRO 6000 (measured on an unmerged probe revision of the collector; L40S without FlashKDA).
- Columns that are constant in what is kept (framework, version, device, op name,
  beam width, attention dtype) and the kernel source (after choosing one per shape).
- Where several attention backends measured the same MLA shape, one is kept in this
  order: FLASHMLA, FLASH_ATTN_MLA, FLASHINFER_MLA, TRTLLM_RAGGED, FLASH_ATTN.
- Repeated measurements of the same shape (same key, same backend) are averaged before
  rounding (column "repeated" below).

## Rows

| GPU | vLLM | table | rows kept | source rows | repeated |
| --- | --- | --- | --- | --- | --- |
${rows}
`;
}
