// SPDX-License-Identifier: Apache-2.0
// The `measured` section of a result: every operator of the step with its shape,
// table cells, time, bytes, FLOPs and bound (docs/RESULT.md, "measured").
#include "io/result_json_measured.h"

#include <cstdio>
#include <string>

namespace stepcalc {
namespace {

const char* dtype_name(KernelDtype d) { return d == KernelDtype::kFp8 ? "fp8" : "bf16"; }

/// Three significant digits, for the text of a modelled cost.
std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

void write_kernel(JsonWriter& w, const KernelDb& db, const KernelTime& k) {
  w.field("table", kernel_table_name(k.table)).field("how", lookup_how_name(k.how)).field("cells", db.describe(k));
}

void write_attention(JsonWriter& w, const MeasuredPlan& p, const AttentionCost& a) {
  w.field("fixed_us", a.fixed_us).field("decode_us", a.decode_us).field("prefill_us", a.prefill_us);
  w.key("lookups").begin_array();
  for (const AttentionLookup& l : a.lookups) {
    w.begin_object()
        .field("phase", l.prefill ? "prefill" : "decode")
        .field("batch", l.batch)
        .field("length", l.length)
        .field("prefix", l.prefix)
        .field("count", l.count)
        .field("time_us", l.time_us);
    write_kernel(w, *p.db, l.kernel);
    w.end_object();
  }
  w.end_array();
}

void write_operator(JsonWriter& w, const MeasuredPlan& p, const MeasuredBreakdown& b, const OperatorCost& c) {
  const Operator& op = p.ops.ops[static_cast<size_t>(c.op)];
  w.begin_object()
      .field("name", op.name)
      .field("kind", op_kind_name(op.kind))
      .field("scope", op_scope_name(op.scope))
      .field("count", c.count)
      .field("rows", c.rows);
  if (op.kind == OpKind::kGemm) w.field("n", op.n).field("k", op.k);
  if (op.kind == OpKind::kMoe)
    w.field("hidden", static_cast<int64_t>(op.moe_hidden))
        .field("intermediate", static_cast<int64_t>(op.moe_intermediate))
        .field("experts", static_cast<int64_t>(op.moe_experts))
        .field("top_k", static_cast<int64_t>(op.moe_topk));
  if (op.kind == OpKind::kAllreduce || op.kind == OpKind::kGather) w.field("elements", c.rows * op.n);
  if (op.kind == OpKind::kGemm || op.kind == OpKind::kMoe)
    w.field("dtype", dtype_name(op.fp8 && p.fp8_kernels ? KernelDtype::kFp8 : KernelDtype::kBf16));
  w.field("time_us_each", c.us_each)
      .field("time_us", c.us)
      .field("bytes", c.bytes)
      .field("flops", c.flops)
      .field("bound", c.bound);
  if (op.kind == OpKind::kAttention) {
    write_attention(w, p, b.attention);
  } else if (op.kind == OpKind::kElementwise) {
    w.field("table", "none").field("how", "modelled");
    w.field("cells", "launch floor " + short_number(p.constants.launch_floor_us) + " us + " +
                         short_number(c.bytes / c.count) + " bytes at " +
                         short_number(p.constants.hbm_bytes_per_s / 1e12) + " TB/s");
  } else {
    write_kernel(w, *p.db, c.kernel);
  }
  w.end_object();
}

}  // namespace

void write_measured(JsonWriter& w, const MeasuredPlan& p, const MeasuredBreakdown& b) {
  const MeasuredTotals& t = b.totals;
  w.key("measured").begin_object();
  w.field("gpu", p.db->gpu().name).field("kernels", p.db->version());
  w.field("gpu_time_us", t.gpu_us).field("cpu_time_us", t.cpu_us);
  w.key("cpu")
      .begin_object()
      .field("step_us", p.cpu.step_us)
      .field("per_request_us", p.cpu.per_request_us)
      .field("requests", t.requests)
      .end_object();
  w.key("rows")
      .begin_object()
      .field("tokens", t.tokens)
      .field("padded_tokens", t.padded_tokens)
      .field("sampled", t.sampled)
      .end_object();
  w.key("totals_us")
      .begin_object()
      .field("gemm", t.gemm_us)
      .field("attention", t.attention_us)
      .field("moe", t.moe_us)
      .field("communication", t.comm_us)
      .field("elementwise", t.elementwise_us)
      .field("prefill", t.prefill_us)
      .field("decode", t.decode_us)
      .end_object();
  const MeasuredConstants& c = p.constants;
  w.key("constants")
      .begin_object()
      .field("hbm_bytes_per_s", c.hbm_bytes_per_s)
      .field("launch_floor_us", c.launch_floor_us)
      .field("decode_fixed_us", c.decode_fixed_us)
      .field("prefill_fixed_us", c.prefill_fixed_us)
      .field("max_graph_tokens", static_cast<int64_t>(c.max_graph_tokens))
      .end_object();
  w.field("weight_bytes_per_gpu", p.ops.weight_bytes_per_gpu)
      .field("kv_bytes_per_token_per_gpu", p.ops.attention.kv_bytes_per_token * static_cast<double>(p.ops.num_layers))
      .field("kv_cache_dtype", dtype_name(p.kv_dtype));
  w.key("operators").begin_array();
  for (const OperatorCost& op : b.operators) write_operator(w, p, b, op);
  w.end_array().end_object();
}

}  // namespace stepcalc
