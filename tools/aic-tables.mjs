// SPDX-License-Identifier: Apache-2.0
// What tools/import-aic.mjs keeps from AIConfigurator's tables: the GPUs and vLLM
// versions shipped, and per table the source Parquet files, the rows kept (a filter)
// and the key columns written (in sort order). Shared with tools/pack-kernels.mjs.

/// Kimi delta attention was measured with a development build of vLLM only
/// (0.1.dev19262+gb6bbf29dd, the Kimi-K3 preview image AIConfigurator pins for its kda family):
/// its tables are shipped in the 0.24.0 kernel set, the newest release each of these GPUs ships
/// (docs/KERNELS.md, "Kimi delta attention"). L40S and RTX PRO 6000 were measured on an unmerged
/// probe revision of the collector (and L40S without FlashKDA or the fused decode): not shipped.
const KDA_VERSION = { '0.24.0': '0.1.dev19262' };

/// GPUs shipped. `dir` names the bench_data/aic and presets/gpus entries; `aic` the
/// AIConfigurator system; `commVersion` a version whose all-reduce table stands in.
export const GPUS = [
  { name: 'H100', dir: 'h100', aic: 'h100_sxm', versions: ['0.14.0', '0.24.0'], defaultVersion: '0.24.0',
    interconnect: 'NVLink', kdaVersion: KDA_VERSION },
  { name: 'H200', dir: 'h200', aic: 'h200_sxm', versions: ['0.14.0', '0.24.0'], defaultVersion: '0.24.0',
    interconnect: 'NVLink', kdaVersion: KDA_VERSION },
  { name: 'B200', dir: 'b200', aic: 'b200_sxm', versions: ['0.24.0'], defaultVersion: '0.24.0',
    interconnect: 'NVLink', kdaVersion: KDA_VERSION },
  { name: 'A100', dir: 'a100', aic: 'a100_sxm', versions: ['0.14.0'], defaultVersion: '0.14.0',
    interconnect: 'NVLink' },
  {
    name: 'L40S', dir: 'l40s', aic: 'l40s', versions: ['0.24.0'], defaultVersion: '0.24.0', interconnect: 'PCIe',
    commVersion: { '0.24.0': '0.22.0' },
  },
  // Issue 23: the other GPUs AIConfigurator measured vLLM on, each at its newest version.
  { name: 'B300', dir: 'b300', aic: 'b300_sxm', versions: ['0.24.0'], defaultVersion: '0.24.0',
    interconnect: 'NVLink', kdaVersion: KDA_VERSION },
  { name: 'GB200', dir: 'gb200', aic: 'gb200', versions: ['0.24.0'], defaultVersion: '0.24.0',
    interconnect: 'NVLink', kdaVersion: KDA_VERSION },
  { name: 'GB300', dir: 'gb300', aic: 'gb300', versions: ['0.24.0'], defaultVersion: '0.24.0',
    interconnect: 'NVLink', kdaVersion: KDA_VERSION },
  { name: 'RTX-PRO-6000', dir: 'rtx-pro-6000', aic: 'rtx_pro_6000_server', versions: ['0.24.0'],
    defaultVersion: '0.24.0', interconnect: 'PCIe' },
  // Intel's B60 (XPU): vLLM runs it eagerly (no CUDA graphs: the eager all-reduce rows are
  // what runs).
  { name: 'B60', dir: 'b60', aic: 'b60', versions: ['0.20.0'], defaultVersion: '0.20.0', interconnect: 'PCIe',
    allreduceKernel: 'vLLM_custom_eager' },
];

/// The MoE tables' routing: power law with exponent 1.01, the milder of the two skews measured
/// (a trained router sends most tokens to a few experts; balanced routing, every expert the
/// same count, reads every expert's weights from 32 decode tokens x top-4 on a 128-expert
/// model). docs/KERNELS.md, "MoE routing".
const MOE_ROUTING = 'power_law_1.01';

/// Table dtype names -> the names stepcalc uses. KV caches are bf16 or fp8; weights also
/// fp8_block (block-scaled FP8), nvfp4, mxfp4 (MXFP4 weights, 16-bit activations:
/// `w4a16_mxfp4`) and int4 (weight-only INT4, `int4_wo`).
const KV_DTYPE = { bfloat16: 'bf16', fp8: 'fp8' };
const GEMM_DTYPE = { bfloat16: 'bf16', fp8: 'fp8', fp8_block: 'fp8_block', nvfp4: 'nvfp4' };
const MOE_DTYPE = { ...GEMM_DTYPE, w4a16_mxfp4: 'mxfp4', int4_wo: 'int4' };
const DTYPE = KV_DTYPE;
const windowZero = (r) => (r.window_size ?? 0) === 0;
const bf16Attention = (r) => r.attn_dtype === 'bfloat16' && r.beam_width === 1 && windowZero(r) &&
  DTYPE[r.kv_cache_dtype];

/// The keys both attention tables share (heads per GPU), the latency and the kernel.
const attentionKeys = (r) => ({
  kv_dtype: DTYPE[r.kv_cache_dtype], head_dim: r.head_dim, kv_heads: r.num_key_value_heads, heads: r.num_heads,
  batch: r.batch_size, latency: r.latency, kernel: r.kernel_source,
});

/// Where a table measured one shape with several kernels (0.24.0 names the kernel vLLM
/// ran), the rank of a kernel: lower wins. vLLM's default choice on the GPU first: the
/// FlashInfer TRT-LLM monolithic MoE kernels on Blackwell, gpt-oss's own MXFP4 kernels,
/// FlashAttention 3 on Hopper (FA4 rows are a few extra measurements), the TRT-LLM
/// prefill and decode attention kernels on Blackwell for their own phase, DeepGEMM for
/// block-scaled FP8 GEMMs; Marlin and the modular variants last.
function kernelRank(kernel, phase) {
  const k = String(kernel ?? '');
  if (phase === 'prefill' && k.includes('trtllmdecode')) return 5;
  if (phase === 'decode' && k.includes('triton_attn')) return 5;
  if (k.includes('fa4')) return 4;
  if (k.includes('marlin')) return 3;
  if (k.includes('modular')) return 2;
  if (k.includes('monolithic') || k.includes('gptoss') || k.includes('DeepGemm')) return 0;
  if (k.includes('Cutlass') || k.includes('cutlass')) return 1;
  return 1;
}

// MLA: DeepSeek-V3's 128 heads split over GPUs (0.14.0 tables say so with tp_size;
// 0.24.0 module tables have tp_size 1 and heads per GPU), BF16 compute and projections.
const mlaRow = (r) => r.mla_dtype === 'bfloat16' && (r.gemm_type ?? 'bfloat16') === 'bfloat16' &&
  (r.model ? r.tp_size === 1 : r.tp_size * r.num_heads === 128) && DTYPE[r.kv_cache_dtype];
/// Where several attention backends measured the same shape, the first of this list wins.
const MLA_KERNELS = ['FLASHMLA', 'FLASH_ATTN_MLA', 'FLASHINFER_MLA', 'TRTLLM_RAGGED', 'FLASH_ATTN', 'vllm_flashmla',
  'vllm_flash_attn_mla'];

/// Gated DeltaNet (linear attention, Qwen3.5/Qwen3-Next): one table per kernel vLLM runs,
/// from gdn_perf. Decode: the conv-state update and the recurrent delta rule at `batch`
/// sequences; prefill: the causal conv1d and the chunked delta rule over `batch` sequences of
/// `seq` tokens. Heads are per GPU (after TP); `d_model` names the model the shape was taken
/// from (the kernels themselves do not read it).
const GDN_SHAPE = ['d_conv', 'head_k_dim', 'head_v_dim', 'k_heads', 'v_heads', 'd_model'];
const gdnRow = (r, kernels, phase) => kernels.includes(r.kernel_source) && r.phase === phase && {
  kernel: r.kernel_source, d_conv: r.d_conv, head_k_dim: r.head_k_dim, head_v_dim: r.head_v_dim, k_heads: r.num_k_heads,
  v_heads: r.num_v_heads, d_model: r.d_model, batch: r.batch_size, seq: r.seq_len, latency: r.latency,
};
/// `kernels`: what vLLM runs, in its order of preference (the chunked delta rule is FlashInfer's
/// on Hopper and datacenter Blackwell, Triton's on L40S and RTX PRO 6000, the only one measured there).
const gdnTable = (file, kernels, phase) => ({
  file, op: 'linear_attention', sources: ['gdn_perf'], part: 'gdn', optional: true,
  columns: phase === 'generation' ? [...GDN_SHAPE, 'batch'] : [...GDN_SHAPE, 'batch', 'seq'],
  prefer: kernels,
  map: (r) => gdnRow(r, kernels, phase),
});

/// Kimi delta attention (Kimi-Linear, measured on Kimi-K3's heads: 96 of 128 split over 1, 2, 4 and
/// 8 GPUs), from kda_perf, keyed as the gated DeltaNet tables (key and value heads are the same
/// heads). Decode: `fused_kda_decode`, the kernel vLLM serves on SM90 and later (the conv-state
/// update and the recurrence in one; the Triton pair it replaces is kept out); prefill:
/// `flashkda_fwd` (the chunked delta rule). The prefill conv (`causal_conv1d_fn_qkv3`) is not
/// imported: it reads 0.4-1.4 ms at one token for any heads (gated DeltaNet's causal_conv1d_fn
/// 2.2 us), which is not the kernel (docs/KERNELS.md). The `verify` rows (speculative decoding) are
/// not imported.
const kdaTable = (file, kernel, phase) => ({
  file, op: 'kda', sources: ['kda_perf'], part: 'kda', optional: true,
  columns: phase === 'generation' ? [...GDN_SHAPE, 'batch'] : [...GDN_SHAPE, 'batch', 'seq'],
  prefer: [kernel],
  map: (r) => gdnRow(r, [kernel], phase),
});

/// DeepSeek sparse attention (DeepSeek-V3.2's MLA with its lightning indexer and top-k token
/// selection): the whole attention module, as the MLA module tables (heads per GPU, tp_size 1),
/// FlashMLA's sparse kernel (FLASHMLA_SPARSE, the only one measured). DeepSeek-V3.2's rows only
/// (the GLM-5 rows are another model's shape), BF16 compute and projections as the MLA tables
/// keep. Prefill: `step` 0 (no cached prefix; the `step` 128 rows are kept out); decode: `isl` 1,
/// `step` = tokens already cached.
const dsaRow = (r) => r.model === 'deepseek-ai/DeepSeek-V3.2' && r.mla_dtype === 'bfloat16' &&
  r.gemm_type === 'bfloat16' && r.tp_size === 1 && DTYPE[r.kv_cache_dtype] &&
  { kv_dtype: DTYPE[r.kv_cache_dtype], heads: r.num_heads, batch: r.batch_size, latency: r.latency,
    kernel: r.kernel_source };

/// One output table. `map` returns the kept row (key columns + latency in ms) or null.
export const TABLES = [
  {
    file: 'gemm', op: 'gemm', sources: ['gemm_perf'], part: 'dense',
    columns: ['dtype', 'n', 'k', 'm'],
    rank: (kernel) => kernelRank(kernel, 'gemm'),
    map: (r) => GEMM_DTYPE[r.gemm_dtype] &&
      { dtype: GEMM_DTYPE[r.gemm_dtype], n: r.n, k: r.k, m: r.m, latency: r.latency, kernel: r.kernel_source },
  },
  {
    file: 'decode_attention', op: 'attention', sources: ['generation_attention_perf'], part: 'dense',
    columns: ['kv_dtype', 'head_dim', 'kv_heads', 'heads', 'batch', 'cached_tokens'],
    rank: (kernel) => kernelRank(kernel, 'decode'),
    map: (r) => r.isl === 1 && bf16Attention(r) && { ...attentionKeys(r), cached_tokens: r.step },
  },
  {
    file: 'prefill_attention', op: 'attention', sources: ['context_attention_perf'], part: 'dense',
    columns: ['kv_dtype', 'head_dim', 'kv_heads', 'heads', 'batch', 'seq'],
    rank: (kernel) => kernelRank(kernel, 'prefill'),
    map: (r) => r.step === 0 && bf16Attention(r) && { ...attentionKeys(r), seq: r.isl },
  },
  {
    file: 'allreduce', op: 'comm', sources: ['custom_allreduce_perf'], part: 'dense',
    columns: ['tp', 'elements'],
    map: (r, gpu) => r.kernel_source === (gpu.allreduceKernel ?? 'vLLM_custom_graph') &&
      r.allreduce_dtype === 'bfloat16' &&
      { tp: r.num_gpus, elements: r.message_size, latency: r.latency },
  },
  {
    file: 'moe', op: 'moe', sources: ['moe_perf'], part: 'moe',
    emptyNote: 'no power_law_1.01 routing rows in the source: no file',
    columns: ['dtype', 'hidden', 'inter', 'experts', 'topk', 'moe_tp', 'moe_ep', 'tokens'],
    rank: (kernel) => kernelRank(kernel, 'moe'),
    map: (r) => r.distribution === MOE_ROUTING && MOE_DTYPE[r.moe_dtype] && {
      dtype: MOE_DTYPE[r.moe_dtype], hidden: r.hidden_size, inter: r.inter_size, experts: r.num_experts, topk: r.topk,
      moe_tp: r.moe_tp_size, moe_ep: r.moe_ep_size, tokens: r.num_tokens, latency: r.latency, kernel: r.kernel_source,
    },
  },
  {
    file: 'mla_prefill', op: 'mla', sources: ['mla_context_module_perf', 'context_mla_perf'], part: 'mla',
      optional: true,
    columns: ['kv_dtype', 'heads', 'batch', 'seq'],
    prefer: MLA_KERNELS,
    map: (r) => mlaRow(r) && r.step === 0 &&
      { kv_dtype: DTYPE[r.kv_cache_dtype], heads: r.num_heads, batch: r.batch_size, seq: r.isl, latency: r.latency,
        kernel: r.kernel_source },
  },
  {
    file: 'mla_decode', op: 'mla', sources: ['mla_generation_module_perf', 'generation_mla_perf'], part: 'mla',
      optional: true,
    columns: ['kv_dtype', 'heads', 'batch', 'cached_tokens'],
    prefer: MLA_KERNELS,
    map: (r) => mlaRow(r) && r.isl === 1 && {
      kv_dtype: DTYPE[r.kv_cache_dtype], heads: r.num_heads, batch: r.batch_size, cached_tokens: r.step,
        latency: r.latency,
      kernel: r.kernel_source,
    },
  },
  gdnTable('gdn_conv_decode', ['causal_conv1d_update'], 'generation'),
  gdnTable('gdn_decode', ['fused_recurrent_gated_delta_rule_packed_decode'], 'generation'),
  gdnTable('gdn_conv_prefill', ['causal_conv1d_fn'], 'context'),
  gdnTable('gdn_prefill', ['chunk_gated_delta_rule_flashinfer', 'chunk_gated_delta_rule_triton'], 'context'),
  {
    file: 'dsa_prefill', op: 'sparse_attention', sources: ['dsa_context_module_perf'], part: 'dsa', optional: true,
    columns: ['kv_dtype', 'heads', 'batch', 'seq'],
    prefer: ['FLASHMLA_SPARSE'],
    map: (r) => r.step === 0 && dsaRow(r) && { ...dsaRow(r), seq: r.isl },
  },
  {
    file: 'dsa_decode', op: 'sparse_attention', sources: ['dsa_generation_module_perf'], part: 'dsa', optional: true,
    columns: ['kv_dtype', 'heads', 'batch', 'cached_tokens'],
    prefer: ['FLASHMLA_SPARSE'],
    map: (r) => r.isl === 1 && dsaRow(r) && { ...dsaRow(r), cached_tokens: r.step },
  },
  kdaTable('kda_decode', 'fused_kda_decode', 'generation'),
  kdaTable('kda_prefill', 'flashkda_fwd', 'context'),
];

/// Significant digits kept of every latency (see bench_data/aic/README.md, "Precision").
export const LATENCY_DIGITS = 3;

/// Latency in microseconds at LATENCY_DIGITS significant digits, as plain decimal text
/// with its trailing zeros (e.g. 12.1, 0.500, 60600): those digits are the packed mantissa.
export function formatLatencyUs(us) {
  if (!(us > 0) || !Number.isFinite(us)) throw new Error(`bad latency ${us}`);
  const [, d0, rest, exp] = /^(\d)\.(\d+)e([+-]\d+)$/.exec(us.toExponential(LATENCY_DIGITS - 1));
  const digits = d0 + rest;
  const shift = Number(exp) - (LATENCY_DIGITS - 1);  // value = digits * 10^shift
  if (shift >= 0) return digits + '0'.repeat(shift);
  const padded = digits.padStart(-shift + 1, '0');
  return `${padded.slice(0, padded.length + shift)}.${padded.slice(padded.length + shift)}`;
}

/// The numbers of an AIConfigurator systems/<gpu>.yaml, flattened to dotted keys
/// ("gpu.mem_bw", "misc.nccl_mem.2"). Only `key: number` lines and nesting by indent.
export function aicYamlNumbers(text) {
  const out = {};
  const stack = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').replace(/^#.*$/, '');
    const m = /^(\s*)([A-Za-z0-9_]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    const indent = m[1].length;
    while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
    const key = [...stack.map((s) => s.key), m[2]].join('.');
    if (m[3] === '') stack.push({ indent, key: m[2] });
    else if (/^-?\d+(\.\d+)?(e-?\d+)?$/.test(m[3])) out[key] = Number(m[3]);
  }
  return out;
}

export { readmeText, noticeText } from './aic-readme.mjs';
