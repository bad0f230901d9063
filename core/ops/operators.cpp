// SPDX-License-Identifier: Apache-2.0
// The operator list of one vLLM forward step (docs/MEASURED-MODE.md, "Operators").
#include "ops/operators.h"

#include <algorithm>

#include "base/enum_table.h"

namespace stepcalc {
namespace {

constexpr double kAct = 2;  // bytes of a 16-bit activation element

double d(int64_t v) { return static_cast<double>(v); }

// The builders below are not inlined: an operator list is built once per plan, and a copy of
// each at every call was most of this file's share of the first view.

/// An operator with its identity set and every figure zero.
[[gnu::noinline]] Operator named(const char* name, OpKind kind, OpScope scope) {
  Operator op;
  op.name = name;
  op.kind = kind;
  op.scope = scope;
  return op;
}

[[gnu::noinline]] Operator gemm(const char* name, OpScope scope, double n, double k, WeightFormat format,
                                int64_t group = 0) {
  Operator op = named(name, OpKind::kGemm, scope);
  op.n = n;
  op.k = k;
  op.format = format;
  op.weight_bytes = n * k * weight_format_bytes(format, group);
  op.row_bytes = (n + k) * kAct;
  op.row_flops = 2 * n * k;
  return op;
}

/// A memory-bound kernel moving `row_bytes` per row.
[[gnu::noinline]] Operator elementwise(const char* name, OpScope scope, double row_bytes, double row_flops) {
  Operator op = named(name, OpKind::kElementwise, scope);
  op.row_bytes = row_bytes;
  op.row_flops = row_flops;
  return op;
}

Operator allreduce(const char* name, OpScope scope, double elements_per_row) {
  Operator op = named(name, OpKind::kAllreduce, scope);
  op.n = elements_per_row;
  op.row_bytes = elements_per_row * kAct;
  op.row_flops = elements_per_row;  // one add per element and GPU
  return op;
}

Operator in_mla_module(Operator op) {
  op.mla_module = true;
  return op;
}

/// Fused residual add + RMSNorm: reads x and the residual, writes both.
Operator add_rms_norm(const char* name, OpScope scope, double width) {
  return elementwise(name, scope, 4 * width * kAct, 5 * width);
}

/// Gated activation (SiLU-and-mul): reads gate and up, writes their product.
Operator act_and_mul(const char* name, OpScope scope, double width) {
  return elementwise(name, scope, 3 * width * kAct, 5 * width);
}

/// MLP of width `ffn` (already per GPU): gate_up, activation, down.
void add_mlp(std::vector<Operator>* ops, const char* gate_up, const char* act, const char* down, OpScope scope,
             double hidden, double ffn, WeightFormat format, int64_t group) {
  ops->push_back(gemm(gate_up, scope, 2 * ffn, hidden, format, group));
  ops->push_back(act_and_mul(act, scope, ffn));
  ops->push_back(gemm(down, scope, hidden, ffn, format, group));
}

/// A gated DeltaNet layer (Qwen3-Next), per GPU: the fused input projections, the causal
/// conv1d, the gating (g, beta), the delta rule, the gated RMSNorm and the output projection.
/// A Kimi delta attention layer (Kimi-Linear; vLLM's KimiDeltaAttention): q, k, v; the decay gate
/// f (low-rank, its first projection replicated) and beta; the short convs of the prefill (a
/// decode's conv update is inside fused_kda_decode); the recurrence; the output gate g (low-rank),
/// its sigmoid-gated RMSNorm and o_proj. Both share one skeleton (the first view's size).
void add_linear_ops(const ModelSpec& s, const Precision& p, int64_t tp, OperatorList* list) {
  std::vector<Operator>& ops = list->ops;
  const LinearAttentionSpec& l = s.linear;
  const bool kda = l.kda;
  const double hidden = d(s.hidden_size), t = d(tp), hd = d(l.head_v_dim);
  const double key_dim = d(l.num_k_heads * l.head_k_dim) / t, value_dim = d(l.num_v_heads * l.head_v_dim) / t;
  const double v_heads = d(l.num_v_heads) / t, conv_dim = d(l.conv_dim()) / t;
  const double conv_state = 2 * d(std::max<int64_t>(0, l.conv_kernel - 1)) * conv_dim * kAct;
  const OpScope linear = OpScope::kLinearLayer;
  // Projections as (N, K) indices into `dims`: static data, not a table built at every call.
  const double dims[] = {hidden, value_dim, hd, v_heads, 2 * key_dim + 2 * value_dim, 2 * v_heads};
  static const struct {
    const char* name;
    uint8_t n, k;
  } kProj[] = {{"in_proj_qkvz", 4, 0}, {"in_proj_ba", 5, 0},   {"kda_q_proj", 1, 0},   {"kda_k_proj", 1, 0},
               {"kda_v_proj", 1, 0},   {"kda_f_a_proj", 2, 0}, {"kda_f_b_proj", 1, 2}, {"kda_b_proj", 3, 0},
               {"kda_g_a_proj", 2, 0}, {"kda_g_b_proj", 1, 2}, {"kda_o_proj", 0, 1},   {"out_proj", 0, 1}};
  const auto add_proj = [&](int from, int to) {
    for (int i = from; i < to; ++i)
      ops.push_back(gemm(kProj[i].name, linear, dims[kProj[i].n], dims[kProj[i].k], p.attention));
  };
  add_proj(kda ? 2 : 0, kda ? 8 : 2);
  // vLLM runs the decodes and the prefill chunks of a step through separate kernels.
  for (bool prefill : {false, true}) {
    if (kda && !prefill) continue;
    Operator conv = named(kda       ? "kda_conv1d_prefill"
                          : prefill ? "gdn_conv1d_prefill"
                                    : "gdn_conv1d_decode",
                          OpKind::kLinearAttention, linear);
    conv.gdn_conv = true;
    conv.gdn_prefill = prefill;
    conv.row_bytes = 2 * conv_dim * kAct;  // the mixed q, k, v in and out
    conv.row_flops = 2 * conv_dim * d(l.conv_kernel);
    conv.state_bytes = conv_state;
    ops.push_back(conv);
  }
  if (!kda) ops.push_back(elementwise("gdn_gating", linear, 2 * v_heads * kAct + 2 * v_heads * 4, 8 * v_heads));
  for (bool prefill : {false, true}) {
    Operator rule = named(kda       ? (prefill ? "kda_prefill" : "kda_decode")
                          : prefill ? "gdn_delta_rule_prefill"
                                    : "gdn_delta_rule_decode",
                          OpKind::kLinearAttention, linear);
    rule.gdn_prefill = prefill;
    rule.row_bytes = (2 * key_dim + 2 * value_dim) * kAct;  // q, k, v in, o out
    rule.row_flops = 6 * v_heads * d(l.head_k_dim) * d(l.head_v_dim);
    // KDA's recurrent state is float32; its fused decode also updates the conv state.
    rule.state_bytes =
        2 * v_heads * d(l.head_k_dim) * d(l.head_v_dim) * kAct * (kda ? 2 : 1) + (kda && !prefill ? conv_state : 0);
    ops.push_back(rule);
  }
  if (kda) add_proj(8, 10);
  ops.push_back(elementwise(kda ? "kda_norm" : "gdn_norm", linear, 3 * value_dim * kAct, 5 * value_dim));
  add_proj(kda ? 10 : 11, kda ? 11 : 12);
  LinearShape& g = list->linear;
  g.d_conv = static_cast<int>(l.conv_kernel);
  g.head_k_dim = static_cast<int>(l.head_k_dim);
  g.head_v_dim = static_cast<int>(l.head_v_dim);
  g.k_heads = static_cast<int>(l.num_k_heads / tp);
  g.v_heads = static_cast<int>(l.num_v_heads / tp);
  g.d_model = static_cast<int>(s.hidden_size);
  g.kda = l.kda;
}

void add_attention_ops(const ModelSpec& s, const Precision& p, int64_t tp, OperatorList* list) {
  std::vector<Operator>& ops = list->ops;
  const double hidden = d(s.hidden_size);
  const double heads = d(s.num_heads) / d(tp);
  // A hybrid model runs softmax attention in its full-attention layers only.
  const OpScope all = s.is_hybrid_linear() ? OpScope::kFullAttentionLayer : OpScope::kEveryLayer;
  ops.push_back(add_rms_norm("input_layernorm", OpScope::kEveryLayer, hidden));
  if (s.is_mla()) {
    const MlaSpec& m = s.mla;
    const double qk_head = d(m.qk_nope_head_dim + m.qk_rope_head_dim);
    if (m.q_lora_rank > 0) {
      ops.push_back(gemm("q_a_proj", all, d(m.q_lora_rank), hidden, p.attention));
      ops.push_back(
          in_mla_module(elementwise("q_a_layernorm", all, 2 * d(m.q_lora_rank) * kAct, 4 * d(m.q_lora_rank))));
      ops.push_back(gemm("q_b_proj", all, heads * qk_head, d(m.q_lora_rank), p.attention));
    } else {
      ops.push_back(gemm("q_proj", all, heads * qk_head, hidden, p.attention));
    }
    ops.push_back(gemm("kv_a_proj", all, d(m.kv_lora_rank + m.qk_rope_head_dim), hidden, p.attention));
    ops.push_back(
        in_mla_module(elementwise("kv_a_layernorm", all, 2 * d(m.kv_lora_rank) * kAct, 4 * d(m.kv_lora_rank))));
    ops.push_back(in_mla_module(elementwise("rotary_emb", all, 2 * (heads + 1) * d(m.qk_rope_head_dim) * kAct,
                                            3 * (heads + 1) * d(m.qk_rope_head_dim))));
    // Up-projection of the latent into per-head keys/values (absorbed into the query and
    // output at decode; the same weights are read and the same FLOPs per new token).
    ops.push_back(in_mla_module(
        gemm("kv_b_proj", all, heads * d(m.qk_nope_head_dim + m.v_head_dim), d(m.kv_lora_rank), p.attention)));
    ops.push_back(named("attention", OpKind::kAttention, all));
    ops.push_back(gemm("o_proj", all, hidden, heads * d(m.v_head_dim), p.attention));
  } else {
    const double head_dim = d(s.head_dim);
    const double kv = d(kv_heads_per_gpu(s, tp));
    const double gate = s.attn_output_gate ? heads : 0;  // gated attention: a second query-sized output
    ops.push_back(gemm("qkv_proj", all, (heads + gate + 2 * kv) * head_dim, hidden, p.attention));
    if (s.qk_norm)
      ops.push_back(elementwise("qk_norm", all, 2 * (heads + kv) * head_dim * kAct, 4 * (heads + kv) * head_dim));
    // A norm over every head: each token's query and key variances (two fp32, four bf16
    // elements' bytes) summed over the TP group before they are applied.
    if (s.qk_norm_all_heads && tp > 1) ops.push_back(allreduce("qk_norm_all_reduce", all, 4));
    ops.push_back(elementwise("rotary_emb", all, 2 * (heads + kv) * head_dim * kAct, 3 * (heads + kv) * head_dim));
    ops.push_back(named("attention", OpKind::kAttention, all));
    if (s.attn_output_gate)  // sigmoid(gate) x attention output: reads both, writes one
      ops.push_back(elementwise("attn_output_gate", all, 3 * heads * head_dim * kAct, 5 * heads * head_dim));
    ops.push_back(gemm("o_proj", all, hidden, heads * head_dim, p.attention));
  }
  if (s.is_hybrid_linear()) add_linear_ops(s, p, tp, list);
  if (tp > 1) ops.push_back(allreduce("attn_all_reduce", OpScope::kEveryLayer, hidden));
  ops.push_back(add_rms_norm("post_attention_layernorm", OpScope::kEveryLayer, hidden));
}

void add_moe_ops(const ModelSpec& s, const Precision& p, int64_t tp, int64_t ep, int64_t dp, OperatorList* list) {
  std::vector<Operator>& ops = list->ops;
  const MoeSpec& m = s.moe;
  const double hidden = d(s.hidden_size);
  const OpScope moe = OpScope::kMoeLayer;
  ops.push_back(gemm("router", moe, d(m.num_experts), hidden, WeightFormat::kBf16));  // replicated, kept 16-bit
  // MXFP4 experts run as one monolithic kernel that takes the router's logits and picks the
  // experts itself; its table times that routing too (docs/MEASURED-MODE.md).
  if (p.experts != WeightFormat::kMxfp4)
    ops.push_back(elementwise("topk_softmax", moe, d(m.num_experts) * 4 + d(m.top_k) * 8, 4 * d(m.num_experts)));
  Operator fused = named("fused_moe", OpKind::kMoe, moe);
  fused.format = p.experts;
  fused.moe_hidden = static_cast<int>(s.hidden_size);
  fused.moe_intermediate = static_cast<int>(m.expert_intermediate);
  fused.moe_experts = static_cast<int>(m.num_experts);
  fused.moe_topk = static_cast<int>(m.top_k);
  // Split by TP (each GPU a slice of every expert; with dp > 1 and no expert parallelism
  // the slices span vLLM's MoE tensor-parallel group of tp x dp GPUs) or, under expert
  // parallelism, by expert (each GPU ep-th of the experts, whole; a token's work lands
  // where its experts are).
  const double split = d(expert_gpus(tp, ep, dp));
  const double expert_params = 3 * hidden * d(m.expert_intermediate);
  fused.weight_bytes = d(m.num_experts) * expert_params / split * weight_format_bytes(p.experts, p.group_size);
  fused.row_bytes = d(m.top_k) * (2 * hidden + 3 * d(m.expert_intermediate) / d(ep > 1 ? 1 : split)) * kAct / d(ep);
  fused.row_flops = d(m.top_k) * 2 * expert_params / split;
  fused.row_scale = d(dp);  // every data-parallel rank's tokens
  ops.push_back(fused);
  if (m.shared_intermediate > 0)
    add_mlp(&ops, "shared_gate_up_proj", "shared_act_and_mul", "shared_down_proj", moe, hidden,
            d(m.shared_intermediate) / d(tp), p.mlp, p.group_size);
  if (dp > 1) {
    // Tokens of every rank gathered to the experts' GPUs and the results scattered back
    // (vLLM's all-gather / reduce-scatter dispatch): the bytes of an all-reduce of all
    // ranks' hidden states over the experts' GPUs (the ep GPUs, or the tp x dp group).
    Operator dispatch = allreduce("moe_dispatch_combine", moe, hidden);
    dispatch.group = static_cast<int>(split);
    dispatch.row_scale = d(dp);
    ops.push_back(dispatch);
  } else if (tp > 1) {
    ops.push_back(allreduce("moe_all_reduce", moe, hidden));
  }
}

}  // namespace

double OperatorList::count(const Operator& op) const {
  switch (op.scope) {
    case OpScope::kEveryLayer:
      return op.per_layer * d(num_layers);
    case OpScope::kDenseLayer:
      return op.per_layer * d(num_dense_layers);
    case OpScope::kMoeLayer:
      return op.per_layer * d(num_moe_layers);
    case OpScope::kStep:
      return op.per_layer;
    case OpScope::kFullAttentionLayer:
      return op.per_layer * d(num_layers - num_linear_layers);
    case OpScope::kLinearLayer:
      return op.per_layer * d(num_linear_layers);
  }
  return 0;
}

OperatorList build_operator_list(const ModelSpec& s, const Precision& p, int64_t tp, int64_t ep, int64_t dp) {
  OperatorList list;
  tp = std::max<int64_t>(1, tp);
  ep = s.is_moe() ? std::max<int64_t>(1, ep) : 1;
  dp = std::max<int64_t>(1, dp);
  list.tp = tp;
  list.ep = ep;
  list.dp = dp;
  list.num_layers = s.num_layers;
  list.num_linear_layers = s.linear.num_layers;
  list.num_moe_layers = s.is_moe() ? s.moe.num_moe_layers : 0;
  list.num_dense_layers = s.num_layers - list.num_moe_layers;
  list.weight_bytes_per_gpu = weight_bytes_per_gpu(s, p, tp, s.is_moe() ? expert_gpus(tp, ep, dp) : tp);
  list.notes = s.notes;
  const double hidden = d(s.hidden_size);
  const double vocab = d(s.vocab_size);
  std::vector<Operator>& ops = list.ops;
  ops.reserve(32);

  ops.push_back(elementwise("embedding", OpScope::kStep, 2 * hidden * kAct, 0));
  if (tp > 1) ops.push_back(allreduce("embedding_all_reduce", OpScope::kStep, hidden));
  add_attention_ops(s, p, tp, &list);
  if (list.num_dense_layers > 0) {
    const double ffn = d(s.is_moe() ? s.moe.dense_intermediate : s.intermediate_size) / d(tp);
    add_mlp(&ops, "gate_up_proj", "act_and_mul", "down_proj", OpScope::kDenseLayer, hidden, ffn, p.mlp, p.group_size);
    if (tp > 1) ops.push_back(allreduce("mlp_all_reduce", OpScope::kDenseLayer, hidden));
  }
  if (list.num_moe_layers > 0) add_moe_ops(s, p, tp, ep, dp, &list);
  ops.push_back(add_rms_norm("final_norm", OpScope::kStep, hidden));
  Operator lm_head = gemm("lm_head", OpScope::kStep, vocab / d(tp), hidden, WeightFormat::kBf16);
  lm_head.rows = OpRows::kSampled;
  ops.push_back(lm_head);
  if (tp > 1) {
    Operator gather = allreduce("logits_gather", OpScope::kStep, vocab);
    gather.kind = OpKind::kGather;
    gather.rows = OpRows::kSampled;
    ops.push_back(gather);
  }
  // Sampling over the full vocabulary: read the float32 logits, write probabilities.
  Operator sampler = elementwise("sampler", OpScope::kStep, 2 * vocab * 4, 5 * vocab);
  sampler.rows = OpRows::kSampled;
  ops.push_back(sampler);

  AttentionShape& a = list.attention;
  a.heads = static_cast<int>(s.num_heads / tp);
  a.kv_fp8 = p.kv_fp8;
  a.kv_bytes_per_token = kv_bytes_per_token_per_gpu(s, p, tp) / d(std::max<int64_t>(1, s.num_attention_layers()));
  if (s.is_mla()) {
    a.mla = true;
    a.kv_heads = 1;
    a.head_dim = static_cast<int>(s.mla.kv_lora_rank + s.mla.qk_rope_head_dim);
    // Absorbed MLA: scores over latent + rope, values over the latent, per head.
    a.flops_per_pair = 2 * d(a.heads) * d(2 * s.mla.kv_lora_rank + s.mla.qk_rope_head_dim);
    a.topk = s.mla.index_topk;
  } else {
    a.kv_heads = static_cast<int>(kv_heads_per_gpu(s, tp));
    a.head_dim = static_cast<int>(s.head_dim);
    a.flops_per_pair = 4 * d(a.heads) * d(s.head_dim);  // QK^T and PV
  }
  return list;
}

const char* op_kind_name(OpKind kind) {
  static const char* const kNames[] = {"gemm",        "attention",       "moe", "all_reduce", "gather",
                                       "elementwise", "linear_attention"};
  return enum_entry(kNames, kind, "");
}

const char* op_scope_name(OpScope scope) {
  static const char* const kNames[] = {"layer", "dense_layer", "moe_layer", "step", "attention_layer", "linear_layer"};
  return enum_entry(kNames, scope, "");
}

}  // namespace stepcalc
