// SPDX-License-Identifier: Apache-2.0
// A `measured` breakdown as the StepResult every mode fills, so the headline,
// `breakdown` and `phases` of the result keep their meaning (docs/RESULT.md).
#include "estimators/measured_result.h"

#include <algorithm>
#include <string>

#include "estimators/reference/step_model.h"

namespace stepcalc {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

/// A phase's share of the step: `share` of every operator scaled by rows, plus its
/// own attention (`attention_us`, `attention_flops`, KV bytes).
void fill_phase(const MeasuredPlan& p, const MeasuredBreakdown& b, double share, double attention_us,
                double kv_read_bytes, double kv_write_bytes, PhaseResult* out) {
  const MeasuredTotals& t = b.totals;
  out->present = true;
  out->comm_s = t.comm_us * share / 1e6;
  out->gemm_time_s = (t.gemm_us + t.moe_us) * share / 1e6;
  out->attn_core_time_s = attention_us / 1e6;
  out->compute_s = (t.gemm_us + t.moe_us + t.elementwise_us) * share / 1e6 + out->attn_core_time_s;
  double weights = 0, activations = 0;
  for (const OperatorCost& c : b.operators) {
    const Operator& op = p.ops.ops[static_cast<size_t>(c.op)];
    if (op.kind == OpKind::kAttention || op.kind == OpKind::kAllreduce || op.kind == OpKind::kGather) continue;
    const double w = std::min(c.bytes, c.count * op.weight_bytes);
    weights += w;
    activations += c.bytes - w;
  }
  out->bytes.weights = weights * share;
  out->bytes.activations = activations * share;
  out->bytes.kv_read = kv_read_bytes;
  out->bytes.kv_write = kv_write_bytes;
  const double total_bytes = out->bytes.weights + out->bytes.activations + kv_read_bytes + kv_write_bytes;
  out->memory_s = total_bytes / p.constants.hbm_bytes_per_s;
}

}  // namespace

std::string attention_config_name(const MeasuredPlan& p, bool per_gpu) {
  const AttentionShape& a = p.ops.attention;
  if (!per_gpu)
    return a.mla ? "mla-" + std::to_string(a.heads * p.ops.tp) + "-" + std::to_string(a.head_dim)
                 : std::to_string(a.heads * p.ops.tp) + "-" + std::to_string(a.kv_heads * p.ops.tp) + "-" +
                       std::to_string(a.head_dim);
  if (p.attention_path == AttentionPath::kMlaModule)
    return (p.ops.attention.topk > 0 ? "dsa-" : "mla-") + std::to_string(p.attn_heads);
  return std::to_string(p.attn_heads) + "-" + std::to_string(p.attn_kv_heads) + "-" + std::to_string(p.attn_head_dim);
}

StepResult measured_step_result(const Request& q, const MeasuredPlan& p, const MeasuredBreakdown& b) {
  StepResult r;
  const MeasuredTotals& t = b.totals;
  r.mode = Mode::kMeasured;
  r.total_us_before_rounding = t.total_us;
  r.step_time_us = std::max<int64_t>(1, round_half_away(t.total_us));
  r.min_step_floor_applied = round_half_away(t.total_us) < 1;
  r.step_hardware_s = t.gpu_us / 1e6;
  r.overhead_us = t.cpu_us;
  r.attn_config_model = attention_config_name(p, false);
  r.attn_config_used = attention_config_name(p, true);
  r.warnings = b.warnings;
  const double layers = d(p.ops.num_layers);
  const double share_decode = t.tokens > 0 ? t.decode_tokens / t.tokens : 0;
  const double kv_token = p.ops.attention.kv_bytes_per_token * layers;
  if (!q.step.prefill.empty()) {
    double new_tokens = 0, read = 0;
    for (const PrefillRequest& c : q.step.prefill) {
      new_tokens += d(c.new_tokens);
      read += d(c.progress_index);
    }
    const double attention_us = layers * (b.attention.prefill_us + b.attention.fixed_us * (1 - share_decode));
    fill_phase(p, b, 1 - share_decode, attention_us, read * kv_token, new_tokens * kv_token, &r.prefill);
    r.prefill.num_requests = static_cast<int64_t>(q.step.prefill.size());
    r.prefill.new_tokens = static_cast<int64_t>(new_tokens);
  }
  if (!q.step.decode.empty()) {
    double read = 0;
    for (const DecodeRequest& c : q.step.decode) read += d(c.progress_index);
    const double attention_us = layers * (b.attention.decode_us + b.attention.fixed_us * share_decode);
    fill_phase(p, b, share_decode, attention_us, read * kv_token,
               d(static_cast<int64_t>(q.step.decode.size())) * kv_token, &r.decode);
    r.decode.batch_size = static_cast<int64_t>(q.step.decode.size());
  }
  for (const OperatorCost& c : b.operators)
    if (p.ops.ops[static_cast<size_t>(c.op)].kind == OpKind::kAttention) {
      const double decode_part = b.attention.decode_us + b.attention.fixed_us * share_decode;
      const double all = b.attention.decode_us + b.attention.prefill_us + b.attention.fixed_us;
      const double f = all > 0 ? decode_part / all : 0;
      r.decode.attn_core_flops = c.flops * f;
      r.prefill.attn_core_flops = c.flops * (1 - f);
    }
  r.bound = r.prefill.present || r.decode.present
                ? (t.prefill_us > t.decode_us ? StepBound::kPrefill : StepBound::kDecode)
                : StepBound::kOverhead;
  return r;
}

}  // namespace stepcalc
