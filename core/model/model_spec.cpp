// SPDX-License-Identifier: Apache-2.0
// Parameter counts and per-GPU sizes of a ModelSpec (see model_spec.h for the rules).
#include "model/model_spec.h"

#include <algorithm>

namespace stepcalc {
namespace {

constexpr double kSixteenBit = 2;  // bytes of a BF16/FP16 element
constexpr double kEightBit = 1;    // bytes of an FP8 element

double d(int64_t v) { return static_cast<double>(v); }

/// Per-layer attention parameters: {sharded over TP, replicated on every GPU}.
struct AttentionParams {
  double sharded = 0;
  double replicated = 0;
};

AttentionParams attention_params_per_layer(const ModelSpec& s, int64_t tp) {
  AttentionParams p;
  const double hidden = d(s.hidden_size);
  if (s.is_mla()) {
    const MlaSpec& m = s.mla;
    const double qk_head = d(m.qk_nope_head_dim + m.qk_rope_head_dim);
    if (m.q_lora_rank > 0) {
      p.replicated += hidden * d(m.q_lora_rank);                 // q_a_proj
      p.sharded += d(m.q_lora_rank) * d(s.num_heads) * qk_head;  // q_b_proj
    } else {
      p.sharded += hidden * d(s.num_heads) * qk_head;  // q_proj
    }
    p.replicated += hidden * d(m.kv_lora_rank + m.qk_rope_head_dim);                         // kv_a_proj_with_mqa
    p.sharded += d(m.kv_lora_rank) * d(s.num_heads) * d(m.qk_nope_head_dim + m.v_head_dim);  // kv_b_proj
    p.sharded += d(s.num_heads) * d(m.v_head_dim) * hidden;                                  // o_proj
    return p;
  }
  const double head_dim = d(s.head_dim);
  p.sharded = 2 * hidden * d(s.num_heads) * head_dim;  // q_proj and o_proj
  // K and V: split over TP, replicated once there are fewer KV heads than GPUs.
  p.sharded += 2 * hidden * d(kv_heads_per_gpu(s, tp)) * head_dim * d(tp);
  return p;
}

}  // namespace

int64_t kv_heads_per_gpu(const ModelSpec& spec, int64_t tp) {
  if (tp <= 0) return spec.num_kv_heads;
  return std::max<int64_t>(1, spec.num_kv_heads / tp);
}

Precision precision_of(const ModelSpec& spec, bool quantize_fp8, bool kv_fp8) {
  Precision p;
  p.attention_fp8 = quantize_fp8 || (spec.quant.fp8 && spec.quant.attention_fp8);
  p.mlp_fp8 = quantize_fp8 || (spec.quant.fp8 && spec.quant.mlp_fp8);
  p.experts_fp8 = quantize_fp8 || (spec.quant.fp8 && spec.quant.experts_fp8);
  p.kv_fp8 = kv_fp8;
  return p;
}

double ParamCounts::total() const {
  return embedding + lm_head + attention + dense_mlp + routed_experts + shared_experts + router + norms;
}

double ParamCounts::active_per_token(const ModelSpec& spec) const {
  const double routed =
      spec.moe.num_experts > 0 ? routed_experts * d(spec.moe.top_k) / d(spec.moe.num_experts) : routed_experts;
  return embedding + lm_head + attention + dense_mlp + routed + shared_experts + router + norms;
}

ParamCounts param_counts(const ModelSpec& s) {
  ParamCounts c;
  const double hidden = d(s.hidden_size);
  c.embedding = d(s.vocab_size) * hidden;
  c.lm_head = s.tie_word_embeddings ? 0 : c.embedding;
  const AttentionParams a = attention_params_per_layer(s, 1);
  c.attention = (a.sharded + a.replicated) * d(s.num_layers);
  c.dense_mlp = 3 * hidden * d(s.is_moe() ? s.moe.dense_intermediate : s.intermediate_size) * d(s.num_dense_layers());
  if (s.is_moe()) {
    const double layers = d(s.moe.num_moe_layers);
    c.routed_experts = layers * d(s.moe.num_experts) * 3 * hidden * d(s.moe.expert_intermediate);
    c.shared_experts = layers * 3 * hidden * d(s.moe.shared_intermediate);
    c.router = layers * hidden * d(s.moe.num_experts);
  }
  c.norms = hidden * d(2 * s.num_layers + 1);
  return c;
}

double weight_bytes_per_gpu(const ModelSpec& s, const Precision& p, int64_t tp) {
  const double t = d(std::max<int64_t>(1, tp));
  const ParamCounts c = param_counts(s);
  const double attn_bytes = p.attention_fp8 ? kEightBit : kSixteenBit;
  const double mlp_bytes = p.mlp_fp8 ? kEightBit : kSixteenBit;
  const double expert_bytes = p.experts_fp8 ? kEightBit : kSixteenBit;
  const AttentionParams a = attention_params_per_layer(s, tp);
  double bytes = (c.embedding + c.lm_head) / t * kSixteenBit;  // vocab-parallel, kept 16-bit
  bytes += (a.sharded / t + a.replicated) * d(s.num_layers) * attn_bytes;
  bytes += c.dense_mlp / t * mlp_bytes;
  bytes += c.shared_experts / t * mlp_bytes;
  bytes += c.routed_experts / t * expert_bytes;  // every expert, its FFN split over TP
  bytes += (c.router + c.norms) * kSixteenBit;   // replicated
  return bytes;
}

double kv_bytes_per_token_per_gpu(const ModelSpec& s, const Precision& p, int64_t tp) {
  const double element = p.kv_fp8 ? kEightBit : kSixteenBit;
  if (s.is_mla()) return d(s.num_layers) * d(s.mla.kv_lora_rank + s.mla.qk_rope_head_dim) * element;
  return 2 * d(s.num_layers) * d(kv_heads_per_gpu(s, tp)) * d(s.head_dim) * element;
}

}  // namespace stepcalc
