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

/// Parameters of one gated DeltaNet layer, all split over TP: in_proj_qkvz, in_proj_ba,
/// the conv1d weights, out_proj, and the per-head A_log, dt_bias and the gated norm.
double linear_params_per_layer(const ModelSpec& s) {
  const LinearAttentionSpec& l = s.linear;
  const double hidden = d(s.hidden_size);
  const double value_dim = d(l.num_v_heads * l.head_v_dim);
  if (l.kda) {
    // q, k, v and o; the decay gate f and the output gate g, each low-rank (hidden -> head_dim ->
    // heads x head_dim); beta; the three short convs; A_log, dt_bias and the gated norm.
    const double hd = d(l.head_v_dim);
    return 4 * hidden * value_dim + hidden * d(l.num_v_heads) + 2 * (hidden * hd + hd * value_dim) +
           d(l.conv_dim()) * d(l.conv_kernel) + d(l.num_v_heads) + value_dim + hd;
  }
  double p = hidden * d(2 * l.num_k_heads * l.head_k_dim + 2 * l.num_v_heads * l.head_v_dim);  // in_proj_qkvz
  p += hidden * d(2 * l.num_v_heads);                                                          // in_proj_ba
  p += d(l.conv_dim()) * d(l.conv_kernel);                                                     // conv1d
  p += value_dim * hidden;                                                                     // out_proj
  p += 2 * d(l.num_v_heads) + d(l.head_v_dim);                                                 // A_log, dt_bias, norm
  return p;
}

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
  p.sharded = (s.attn_output_gate ? 3 : 2) * hidden * d(s.num_heads) * head_dim;  // q_proj (+ gate) and o_proj
  // K and V: split over TP, replicated once there are fewer KV heads than GPUs.
  p.sharded += 2 * hidden * d(kv_heads_per_gpu(s, tp)) * head_dim * d(tp);
  return p;
}

}  // namespace

int64_t kv_heads_per_gpu(const ModelSpec& spec, int64_t tp) {
  if (tp <= 0) return spec.num_kv_heads;
  return std::max<int64_t>(1, spec.num_kv_heads / tp);
}

const char* weight_format_name(WeightFormat format) {
  static const char* const kNames[] = {"bf16", "fp8", "fp8_block", "nvfp4", "mxfp4", "int4"};
  const auto i = static_cast<size_t>(format);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "bf16";
}

double weight_format_bytes(WeightFormat format, int64_t group_size) {
  switch (format) {
    case WeightFormat::kFp8:
      return kEightBit;
    case WeightFormat::kFp8Block:
      return kEightBit + 4.0 / (128 * 128);  // an FP32 scale per 128 x 128 block
    case WeightFormat::kNvfp4:
      return 0.5 + 1.0 / 16;  // an FP8 scale per 16 values
    case WeightFormat::kMxfp4:
      return 0.5 + 1.0 / 32;  // an 8-bit power-of-two scale per 32 values
    case WeightFormat::kInt4:
      return 0.5 + 2.0 / d(group_size > 0 ? group_size : 128);  // a 16-bit scale per group
    default:
      return kSixteenBit;
  }
}

bool same_format_family(WeightFormat a, WeightFormat b) {
  auto family = [](WeightFormat f) { return f == WeightFormat::kFp8Block ? WeightFormat::kFp8 : f; };
  return family(a) == family(b);
}

WeightFormat Precision::main_format() const {
  WeightFormat best = WeightFormat::kBf16;
  for (WeightFormat f : {attention, mlp, experts})
    if (weight_format_bytes(f, group_size) < weight_format_bytes(best, group_size)) best = f;
  return best;
}

Precision precision_of(const ModelSpec& spec, WeightFormat quantization, KvCacheDtype kv) {
  Precision p;
  const QuantSpec& q = spec.quant;
  if (quantization != WeightFormat::kBf16 && !(q.quantized() && same_format_family(q.format, quantization))) {
    p.attention = p.mlp = p.experts = quantization;  // every linear layer, as an online or default quantisation
  } else if (q.quantized()) {
    p.attention = q.attention ? q.format : WeightFormat::kBf16;
    p.mlp = q.mlp ? q.format : WeightFormat::kBf16;
    p.experts = q.experts ? q.format : WeightFormat::kBf16;
    p.group_size = q.group_size;
  }
  p.kv_fp8 = kv == KvCacheDtype::kFp8 || (kv == KvCacheDtype::kAuto && q.kv_fp8);
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
  c.attention =
      (a.sharded + a.replicated) * d(s.num_attention_layers()) + linear_params_per_layer(s) * d(s.linear.num_layers);
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

int64_t expert_gpus(int64_t tp, int64_t ep, int64_t dp) {
  return ep > 1 ? ep : std::max<int64_t>(1, tp) * std::max<int64_t>(1, dp);
}

double weight_bytes_per_gpu(const ModelSpec& s, const Precision& p, int64_t tp, int64_t experts_over) {
  const double t = d(std::max<int64_t>(1, tp));
  const ParamCounts c = param_counts(s);
  const double attn_bytes = weight_format_bytes(p.attention, p.group_size);
  const double mlp_bytes = weight_format_bytes(p.mlp, p.group_size);
  const double expert_bytes = weight_format_bytes(p.experts, p.group_size);
  const AttentionParams a = attention_params_per_layer(s, tp);
  double bytes = (c.embedding + c.lm_head) / t * kSixteenBit;  // vocab-parallel, kept 16-bit
  bytes += (a.sharded / t + a.replicated) * d(s.num_attention_layers()) * attn_bytes;
  bytes += linear_params_per_layer(s) / t * d(s.linear.num_layers) * attn_bytes;
  bytes += c.dense_mlp / t * mlp_bytes;
  bytes += c.shared_experts / t * mlp_bytes;
  bytes += c.routed_experts / (experts_over > 0 ? d(experts_over) : t) * expert_bytes;  // sliced, or by expert
  bytes += (c.router + c.norms) * kSixteenBit;                                          // replicated
  return bytes;
}

double kv_bytes_per_token_per_gpu(const ModelSpec& s, const Precision& p, int64_t tp) {
  const double element = p.kv_fp8 ? kEightBit : kSixteenBit;
  if (s.is_mla())
    return d(s.num_attention_layers()) *
           (d(s.mla.kv_lora_rank + s.mla.qk_rope_head_dim) * element + d(s.mla.index_key_bytes));
  return 2 * d(s.num_attention_layers()) * d(kv_heads_per_gpu(s, tp)) * d(s.head_dim) * element;
}

double linear_state_bytes_per_layer(const ModelSpec& s, int64_t tp) {
  if (!s.is_hybrid_linear()) return 0;
  const LinearAttentionSpec& l = s.linear;
  const double t = d(std::max<int64_t>(1, tp));
  const double conv = d(std::max<int64_t>(0, l.conv_kernel - 1)) * d(l.conv_dim()) / t;
  const double recurrent = d(l.num_v_heads) / t * d(l.head_k_dim) * d(l.head_v_dim);
  return (conv + recurrent * (l.kda ? 2 : 1)) * kSixteenBit;
}

}  // namespace stepcalc
