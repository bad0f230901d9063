// SPDX-License-Identifier: Apache-2.0
// The `measured` section of a result: every operator of the step with its shape,
// table cells, time, bytes, FLOPs and bound (docs/RESULT.md, "measured").
#include "io/result_json_measured.h"

#include <string>

#include "json/text_format.h"

namespace stepcalc {
namespace {

/// Three significant digits, for the text of a modelled cost.
std::string short_number(double v) { return format_significant(v, 3); }

void write_kernel(JsonWriter& w, const KernelDb& db, const KernelTime& k) {
  w.field("table", kernel_table_name(k.table)).field("how", lookup_how_name(k.how)).field("cells", db.describe(k));
  if (k.outlier_us > 0)
    w.object("table_outlier", {{"dtype", kernel_dtype_name(k.outlier_dtype)}, {"us", k.outlier_us}});
}

void write_attention(JsonWriter& w, const MeasuredPlan& p, const AttentionCost& a) {
  w.fields({{"fixed_us", a.fixed_us}, {"decode_us", a.decode_us}, {"prefill_us", a.prefill_us}});
  w.key("lookups").begin_array();
  for (const AttentionLookup& l : a.lookups) {
    w.begin_object().fields({{"phase", l.prefill ? "prefill" : "decode"},
                             {"batch", l.batch},
                             {"length", l.length},
                             {"prefix", l.prefix},
                             {"count", l.count},
                             {"time_us", l.time_us}});
    write_kernel(w, *p.db, l.kernel);
    w.end_object();
  }
  w.end_array();
}

void write_operator(JsonWriter& w, const MeasuredPlan& p, const MeasuredBreakdown& b, const OperatorCost& c) {
  const Operator& op = p.ops.ops[static_cast<size_t>(c.op)];
  w.begin_object().fields({{"name", op.name},
                           {"kind", op_kind_name(op.kind)},
                           {"scope", op_scope_name(op.scope)},
                           {"count", c.count},
                           {"rows", c.rows}});
  if (op.kind == OpKind::kGemm) w.field("n", op.n).field("k", op.k);
  if (op.kind == OpKind::kMoe)
    w.fields({{"hidden", static_cast<int64_t>(op.moe_hidden)},
              {"intermediate", static_cast<int64_t>(op.moe_intermediate)},
              {"experts", static_cast<int64_t>(op.moe_experts)},
              {"top_k", static_cast<int64_t>(op.moe_topk)}});
  if (op.kind == OpKind::kAllreduce || op.kind == OpKind::kGather) w.field("elements", c.rows * op.n);
  if (op.kind == OpKind::kGemm || op.kind == OpKind::kMoe)
    w.field("dtype", kernel_dtype_name(op.kind == OpKind::kMoe && !p.moe_from_gemms ? p.moe_dtype_of(op.format)
                                                                                    : p.gemm_dtype_of(op.format)));
  w.fields(
      {{"time_us_each", c.us_each}, {"time_us", c.us}, {"bytes", c.bytes}, {"flops", c.flops}, {"bound", c.bound}});
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
  w.fields(
      {{"gpu", p.db->gpu().name}, {"kernels", p.db->version()}, {"gpu_time_us", t.gpu_us}, {"cpu_time_us", t.cpu_us}});
  w.object("cpu", {{"step_us", p.cpu.step_us}, {"per_request_us", p.cpu.per_request_us}, {"requests", t.requests}});
  w.object("rows", {{"tokens", t.tokens}, {"padded_tokens", t.padded_tokens}, {"sampled", t.sampled}});
  w.object("totals_us", {{"gemm", t.gemm_us},
                         {"attention", t.attention_us},
                         {"moe", t.moe_us},
                         {"communication", t.comm_us},
                         {"elementwise", t.elementwise_us},
                         {"prefill", t.prefill_us},
                         {"decode", t.decode_us}});
  const MeasuredConstants& c = p.constants;
  w.object("constants", {{"hbm_bytes_per_s", c.hbm_bytes_per_s},
                         {"launch_floor_us", c.launch_floor_us},
                         {"decode_fixed_us", c.decode_fixed_us},
                         {"prefill_fixed_us", c.prefill_fixed_us},
                         {"max_graph_tokens", static_cast<int64_t>(c.max_graph_tokens)}});
  w.fields({{"weight_bytes_per_gpu", p.ops.weight_bytes_per_gpu},
            {"kv_bytes_per_token_per_gpu", p.ops.attention.kv_bytes_per_token * static_cast<double>(p.ops.num_layers)},
            {"kv_cache_dtype", kernel_dtype_name(p.kv_dtype)}});
  w.key("operators").begin_array();
  for (const OperatorCost& op : b.operators) write_operator(w, p, b, op);
  w.end_array().end_object();
}

}  // namespace stepcalc
