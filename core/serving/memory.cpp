// SPDX-License-Identifier: Apache-2.0
#include "serving/memory.h"

#include <algorithm>
#include <cmath>

#include "json/text_format.h"
#include "serving/engine_defaults.h"

namespace stepcalc {
namespace {

constexpr double kActivationBytes = 2;  // BF16/FP16 activations
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
/// vLLM's fused-MoE kernel works through at most this many tokens at a time
/// (VLLM_FUSED_MOE_CHUNK_SIZE, default 32768).
constexpr int64_t kFusedMoeChunkTokens = 32768;
/// Bytes per logit in the sampler's dummy run: the 16-bit logits, a float32 copy
/// and float32 probabilities.
constexpr double kSamplerBytesPerLogit = 2 + 4 + 4;
/// Device memory one captured CUDA graph piece keeps, roughly: vLLM logs 0.65 GiB
/// for gemma-3-4b (51 sizes x 35 pieces) and ~1.3 GB for Llama-4 Maverick (51 x 49).
constexpr double kCudaGraphPieceBytes = 0.4 * kMiB;

double d(int64_t v) { return static_cast<double>(v); }

/// vLLM 0.11-0.15 capture sizes: 1, 2, 4, then every 8 below 256, then every 16 up
/// to min(2 x max_num_seqs, 512).
int64_t cuda_graph_sizes(int64_t max_num_seqs) {
  const int64_t largest = std::min<int64_t>(2 * max_num_seqs, 512);
  int64_t n = 0;
  for (int64_t s : {1, 2, 4}) n += s <= largest ? 1 : 0;
  if (largest >= 8) n += (std::min<int64_t>(largest, 255) - 8) / 8 + 1;
  if (largest >= 256) n += (largest - 256) / 16 + 1;
  return n;
}

std::string gib(double bytes) { return format_fixed(bytes / kGiB, 2) + " GiB"; }

}  // namespace

double profile_activation_bytes(const ModelSpec& s, int64_t tp, int64_t tokens, int64_t sequences) {
  const double t = d(std::max<int64_t>(1, tp));
  const double n = d(tokens);
  const double hidden = d(s.hidden_size);
  const double residual = 2 * hidden;  // the layer input and the residual stream
  const double heads = d(s.num_heads) / t;
  double attention = 0;
  if (s.is_mla()) {
    const MlaSpec& m = s.mla;
    attention = residual + heads * d(2 * (m.qk_nope_head_dim + m.qk_rope_head_dim) + 2 * m.v_head_dim) +
                d(m.kv_lora_rank + m.qk_rope_head_dim + m.q_lora_rank);
  } else {
    // Fused QKV output (with the output gate's half, gated attention) and the attention output.
    attention = residual + ((s.attn_output_gate ? 3 : 2) * heads + 2 * d(kv_heads_per_gpu(s, tp))) * d(s.head_dim);
  }
  double peak = attention * n;
  if (s.is_hybrid_linear()) {
    // A gated DeltaNet layer: its fused projections' output, the conv output and the core's.
    const LinearAttentionSpec& l = s.linear;
    const double qkvz = d(2 * l.num_k_heads * l.head_k_dim + 2 * l.num_v_heads * l.head_v_dim);
    const double values = d(l.num_v_heads * l.head_v_dim);
    peak = std::max(peak, (residual + (qkvz + 2 * d(l.num_v_heads) + d(l.conv_dim()) + values) / t) * n);
  }
  if (s.num_dense_layers() > 0) {
    const double ffn = d(s.is_moe() ? s.moe.dense_intermediate : s.intermediate_size) / t;
    peak = std::max(peak, (residual + 3 * ffn) * n);  // gate_up output and the SiLU-and-mul result
  }
  if (s.is_moe()) {
    // fused_moe's three intermediate caches per routed token, over a chunk of tokens.
    const double chunk = d(std::min(tokens, kFusedMoeChunkTokens));
    const double routed = d(s.moe.top_k) * (3 * d(s.moe.expert_intermediate) / t + hidden);
    peak = std::max(peak, residual * n + routed * chunk);
  }
  const double sampler =
      hidden * n + d(std::min(sequences, tokens)) * d(s.vocab_size) * kSamplerBytesPerLogit / kActivationBytes;
  return std::max(peak, sampler) * kActivationBytes;
}

ServingMemory plan_memory(const ModelSpec& spec, const Precision& precision, int64_t tp, const GpuSpec& gpu,
                          const EngineSettings& settings, int64_t experts_over) {
  ServingMemory m;
  m.gpu = gpu.name;
  m.tp = tp;
  m.block_size = settings.block_size;
  m.gpu_memory_bytes = cuda_visible_memory_bytes(gpu);
  m.gpu_memory_utilization = settings.gpu_memory_utilization;
  m.budget_bytes = m.gpu_memory_bytes * settings.gpu_memory_utilization;
  m.headroom_bytes = m.gpu_memory_bytes - m.budget_bytes;
  m.weights_bytes = weight_bytes_per_gpu(spec, precision, tp, experts_over);
  m.kv_bytes_per_token = kv_bytes_per_token_per_gpu(spec, precision, tp);
  m.activation_bytes = profile_activation_bytes(spec, tp, settings.max_num_batched_tokens, settings.max_num_seqs);
  const int64_t group = std::max(tp, experts_over);
  m.non_torch_bytes = group > 1 ? gpu.nccl_mem_at_tp(static_cast<int>(std::min<int64_t>(group, 1 << 20))) : 0;
  m.kv_cache_bytes = m.budget_bytes - m.weights_bytes - m.activation_bytes - m.non_torch_bytes;
  // vLLM: num_blocks = available // page_size // layers per group, page = one layer's block.
  const double layers = d(std::max<int64_t>(1, spec.num_layers));
  const double page_bytes = m.kv_bytes_per_token / layers * d(settings.block_size);
  double per_group = layers;  // one group of every layer
  // The hybrid allocator (vLLM v1, uniform page size): layers of each kind in groups of the
  // smaller kind's count, or of the larger's when it is under 1.25 x the smaller (less padding).
  const int64_t sliding = spec.sliding_window > 0 ? std::min(spec.sliding_layers, spec.num_layers) : 0;
  const int64_t full = spec.num_layers - sliding;
  if (sliding > 0) {
    const int64_t lo = full > 0 ? std::min(full, sliding) : sliding, hi = std::max(full, sliding);
    const int64_t size = 4 * hi < 5 * lo ? hi : lo;
    per_group = d(size);
    m.kv_full_groups = (full + size - 1) / size;
    m.kv_sliding_groups = (sliding + size - 1) / size;
    m.kv_window_tokens = spec.sliding_window;
  }
  if (spec.is_hybrid_linear()) {
    // vLLM's hybrid allocator for attention + mamba-style (gated DeltaNet, KDA) layers
    // (docs/SERVING.md, "Memory"): the attention block size is the smallest multiple of 16
    // (the attention kernels' block alignment; 64 for MLA's) whose page of one layer holds one
    // request's state of one linear layer, unless the configured block size is larger; the
    // state's page is padded to the attention page, so every layer's page is the same.
    const double token_bytes = m.kv_bytes_per_token / d(std::max<int64_t>(1, spec.num_attention_layers()));
    m.state_bytes_per_layer = linear_state_bytes_per_layer(spec, tp);
    m.state_bytes_per_request = m.state_bytes_per_layer * d(spec.linear.num_layers);
    const int64_t kAlign = spec.is_mla() ? 64 : 16;
    const int64_t needed =
        kAlign * static_cast<int64_t>(std::ceil(m.state_bytes_per_layer / (d(kAlign) * token_bytes)));
    m.block_size = std::max(settings.block_size, needed);
    m.page_bytes = d(m.block_size) * token_bytes;
    // Groups of equal size over both kinds, as for sliding windows below.
    const int64_t full = spec.num_attention_layers(), linear = spec.linear.num_layers;
    const int64_t lo = std::min(full, linear), hi = std::max(full, linear);
    const int64_t size = 4 * hi < 5 * lo ? hi : lo;
    m.kv_full_groups = (full + size - 1) / size;
    m.kv_state_groups = (linear + size - 1) / size;
    if (m.kv_cache_bytes > 0)
      m.kv_cache_blocks = static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / m.page_bytes) / d(size)));
  } else {
    m.page_bytes = page_bytes;
    if (m.kv_cache_bytes > 0 && page_bytes > 0)
      m.kv_cache_blocks = static_cast<int64_t>(std::floor(std::floor(m.kv_cache_bytes / page_bytes) / per_group));
  }
  m.kv_cache_tokens = m.kv_cache_blocks * m.block_size / std::max<int64_t>(1, m.kv_full_groups);
  m.cuda_graph_bytes = d(cuda_graph_sizes(settings.max_num_seqs)) * (layers + 1) * kCudaGraphPieceBytes;
  m.fits = m.kv_cache_blocks > 0;
  return m;
}

std::vector<Warning> memory_warnings(const ServingMemory& m, double step_kv_tokens) {
  std::vector<Warning> out;
  if (!m.fits) {
    out.push_back({"model_does_not_fit",
                   "The model does not fit at TP " + std::to_string(m.tp) + " on " + m.gpu + ": weights " +
                       gib(m.weights_bytes) + " + activations " + gib(m.activation_bytes) + " + NCCL " +
                       gib(m.non_torch_bytes) + " per GPU leave no KV cache in vLLM's " + gib(m.budget_bytes) +
                       " budget (" + gib(m.gpu_memory_bytes) + " x " + format_fixed(m.gpu_memory_utilization, 2) +
                       "). Use a larger TP, FP8 weights or a GPU with more memory."});
    return out;
  }
  const double cache_tokens = d(m.kv_cache_tokens);
  if (step_kv_tokens > cache_tokens) {
    const std::string text = "The step's requests hold " + format_fixed(step_kv_tokens, 0) +
                             " tokens of KV cache but vLLM's cache holds " + std::to_string(m.kv_cache_tokens) + " (" +
                             std::to_string(m.kv_cache_blocks) + " blocks of " + std::to_string(m.block_size) +
                             "): vLLM would preempt requests rather than run this step.";
    out.push_back({"kv_cache_overflow", text});
  }
  if (m.cuda_graph_bytes > m.headroom_bytes)
    out.push_back({"cuda_graphs_exceed_headroom",
                   "CUDA graphs need about " + gib(m.cuda_graph_bytes) + " but only " + gib(m.headroom_bytes) +
                       " lie above the gpu_memory_utilization budget; vLLM may run out of memory at start-up."});
  return out;
}

}  // namespace stepcalc
