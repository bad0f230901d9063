// SPDX-License-Identifier: Apache-2.0
// The `measured` mode's step pricing: every operator of the list at the step's rows.
#include "estimators/measured.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/enum_table.h"
#include "estimators/measured_attention.h"
#include "json/text_format.h"

namespace stepcalc {
namespace {

/// `step` with every request's context cut to the last `window` tokens (what a sliding layer
/// reads: a decode at most window - 1 earlier tokens, a prefill chunk at most that many before
/// it; the chunk's own tokens are still priced as attending to each other). False, and `out`
/// untouched, when no request reaches past the window.
bool within_window(const Step& step, int64_t window, Step* out) {
  const int64_t reach = window - 1;
  bool cut = false;
  for (const DecodeRequest& r : step.decode) cut = cut || r.progress_index > reach;
  for (const PrefillRequest& r : step.prefill) cut = cut || r.progress_index > reach;
  if (!cut) return false;
  *out = step;  // into `out`'s buffers when they are large enough
  for (DecodeRequest& r : out->decode) r.progress_index = std::min(r.progress_index, reach);
  for (PrefillRequest& r : out->prefill) r.progress_index = std::min(r.progress_index, reach);
  return true;
}

double d(int64_t v) { return static_cast<double>(v); }

/// Rows of the step: tokens (as given and CUDA-graph padded) and sampled sequences.
struct StepRows {
  double prefill_tokens = 0, decode_tokens = 0, tokens = 0, padded = 0, sampled = 0;
};

StepRows rows_of(const MeasuredPlan& p, const Step& s) {
  StepRows r;
  for (const PrefillRequest& q : s.prefill) r.prefill_tokens += d(q.new_tokens);
  for (const DecodeRequest& q : s.decode) r.decode_tokens += d(q.new_tokens);
  r.tokens = r.prefill_tokens + r.decode_tokens;
  r.padded = cuda_graph_tokens(r.tokens, p.constants.max_graph_tokens);
  r.sampled = d(static_cast<int64_t>(s.prefill.size() + s.decode.size()));
  return r;
}

const char* bound_of(const MeasuredPlan& p, const Operator& op, double us_each, double rows) {
  if (op.kind == OpKind::kAllreduce || op.kind == OpKind::kGather) return "communication";
  const GpuSpec& g = p.db->gpu();
  // FP8 and NVFP4 GEMMs run on the low-precision tensor cores (FP8's peak is the floor
  // used for both); weight-only formats (MXFP4 and INT4 with 16-bit activations) at BF16's.
  const bool low =
      op.format == WeightFormat::kFp8 || op.format == WeightFormat::kFp8Block || op.format == WeightFormat::kNvfp4;
  const double peak = (low && g.fp8_tflops > 0 ? g.fp8_tflops : g.bf16_tflops) * 1e12;
  const double compute_us = peak > 0 ? rows * op.row_flops / peak * 1e6 : 0;
  const double bytes = op.weight_bytes + rows * op.row_bytes;
  const double memory_us = g.hbm_bw_bytes_per_s > 0 ? bytes / g.hbm_bw_bytes_per_s * 1e6 : 0;
  if (std::max(compute_us, memory_us) < 0.5 * us_each) return "launch";
  return compute_us >= memory_us ? "compute" : "memory";
}

/// Bytes one instance moves: weights (MoE: the experts the rows reach) + activations.
double op_bytes(const Operator& op, double rows) {
  double weights = op.weight_bytes;
  if (op.kind == OpKind::kMoe && op.moe_experts > 0)
    weights *= std::min(1.0, rows * op.moe_topk / static_cast<double>(op.moe_experts));
  return weights + rows * op.row_bytes;
}

/// The fused MoE without a MoE table: the grouped expert GEMMs as one GEMM each for
/// gate_up and down, over the experts `rows` reach (m = rows per expert, n = the
/// reached experts' widths side by side): the same weight bytes and FLOPs.
KernelTime moe_as_gemms(const MeasuredPlan& p, const Operator& op, double rows) {
  const double experts = std::min(static_cast<double>(op.moe_experts), std::ceil(rows * op.moe_topk));
  const double per_expert = rows * op.moe_topk / experts;
  // Each expert sliced over tp GPUs, or over the tp x dp group with dp > 1 (ep 1).
  const double slices = static_cast<double>(p.ops.ep > 1 ? p.ops.tp : expert_gpus(p.ops.tp, 1, p.ops.dp));
  const double ffn = op.moe_intermediate / slices, hidden = op.moe_hidden;
  const KernelDtype dtype = p.gemm_dtype_of(op.format);
  KernelTime t = p.db->gemm(dtype, per_expert, experts * 2 * ffn, hidden);
  const KernelTime down = p.db->gemm(dtype, per_expert, experts * hidden, ffn);
  t.us += down.us + p.constants.launch_floor_us + rows * op.moe_topk * 3 * ffn * 2 / p.constants.hbm_bytes_per_s * 1e6;
  t.how = LookupHow::kApproximated;
  return t;
}

/// An all-reduce of `elements` bf16 values over `group` GPUs. Within a node, the measured
/// table; over several nodes (group > gpus_per_node), the in-node all-reduce plus each
/// GPU's share crossing the fabric twice (reduce-scatter, all-gather) at the GPU's
/// inter-node bandwidth: approximated, the tables measure one node.
KernelTime collective(const MeasuredPlan& p, int group, double elements) {
  const GpuSpec& g = p.db->gpu();
  const int node = g.gpus_per_node >= 1 ? static_cast<int>(g.gpus_per_node) : 8;
  if (group <= node || !(g.inter_node_bw_bytes_per_s > 0)) return p.db->allreduce(group, elements);
  KernelTime t = p.db->allreduce(node, elements);
  const double nodes = std::ceil(static_cast<double>(group) / node);
  const double shard_bytes = elements * 2 / node;
  t.us += 2 * (nodes - 1) / nodes * shard_bytes / g.inter_node_bw_bytes_per_s * 1e6 + g.p2p_latency_s * 1e6;
  if (lookup_how_rank(t.how) < lookup_how_rank(LookupHow::kApproximated)) t.how = LookupHow::kApproximated;
  return t;
}

/// `us`, the time of one instance of `op` on the tables' GPU, on the plan's `scaled_to` GPU:
/// what is above the launch floor (communication: the link latency) times the ratio of the
/// op's two rooflines (its FLOPs at the format's peak, or its bytes at HBM bandwidth), or of
/// the two interconnects' bandwidths.
double scaled_us(const MeasuredPlan& p, const Operator& op, double rows, double us) {
  if (p.scaled_to == nullptr) return us;
  double floor = p.constants.launch_floor_us, ratio = p.scale_link;
  if (op.kind == OpKind::kAllreduce || op.kind == OpKind::kGather) {
    floor = p.db->gpu().p2p_latency_s * 1e6;
  } else {
    const bool low =
        op.format == WeightFormat::kFp8 || op.format == WeightFormat::kFp8Block || op.format == WeightFormat::kNvfp4;
    const auto roof = [&](const GpuSpec& g) {
      const double peak = (low && g.fp8_tflops > 0 ? g.fp8_tflops : g.bf16_tflops) * 1e12;
      return std::max(peak > 0 ? rows * op.row_flops / peak : 0.0,
                      g.hbm_bw_bytes_per_s > 0 ? op_bytes(op, rows) / g.hbm_bw_bytes_per_s : 0.0);
    };
    const double measured_on = roof(p.db->gpu());
    ratio = measured_on > 0 ? roof(*p.scaled_to) / measured_on : p.scale_hbm;
  }
  return us <= floor ? us : floor + (us - floor) * ratio;
}

double op_us(const MeasuredPlan& p, const Operator& op, double rows, KernelTime* kernel);

/// One gated DeltaNet kernel of one layer for the step (`op`: the conv1d or the delta rule, of
/// the decodes or of the prefill chunks). Decodes: one batch, the decode table at their count.
/// Prefill: each chunk its share of a batch of the step's chunks at its own length,
/// T(b, n_i) / b (a chunk after a cached prefix or an earlier chunk starts from the stored
/// state: priced as a fresh sequence of its new tokens; reading the state is small beside
/// them). `kernel` gets the first lookup's cells at the worst provenance of all; 0 (and
/// `kernel` untouched) when the step has no request of the op's phase.
double linear_layer_us(const MeasuredPlan& p, const Operator& op, const Step& s, KernelTime* kernel) {
  const LinearShape& l = p.ops.linear;
  GdnShape g;
  g.d_conv = l.d_conv;
  g.head_k_dim = l.head_k_dim;
  g.head_v_dim = l.head_v_dim;
  g.k_heads = l.k_heads;
  g.v_heads = l.v_heads;
  g.d_model = l.d_model;
  const auto keep = [&](const KernelTime& t, bool first) {
    if (kernel == nullptr) return;
    if (first) {
      *kernel = t;
    } else if (lookup_how_rank(t.how) > lookup_how_rank(kernel->how)) {
      kernel->how = t.how;
    }
  };
  if (l.kda && op.gdn_conv) {
    // Kimi delta attention's prefill convs (q, k and v, three launches): memory-bound, their bytes
    // over the effective HBM bandwidth; the measured table is not the kernel (docs/KERNELS.md).
    double tokens = 0;
    for (const PrefillRequest& c : s.prefill) tokens += d(c.new_tokens);
    Operator conv = op;
    conv.kind = OpKind::kElementwise;
    conv.row_bytes /= 3;
    return tokens > 0 ? 3 * scaled_us(p, conv, tokens, op_us(p, conv, tokens, kernel)) : 0;
  }
  if (!op.gdn_prefill) {
    if (s.decode.empty()) return 0;
    const double batch = d(static_cast<int64_t>(s.decode.size()));
    const KernelTime t = p.db->gdn(l.kda         ? KernelTable::kKdaDecode
                                   : op.gdn_conv ? KernelTable::kGdnConvDecode
                                                 : KernelTable::kGdnDecode,
                                   batch, 1, g);
    keep(t, true);
    return scaled_us(p, op, batch, t.us);
  }
  const double chunks = d(static_cast<int64_t>(s.prefill.size()));
  double us = 0;
  for (size_t i = 0; i < s.prefill.size(); ++i) {
    const double tokens = d(s.prefill[i].new_tokens);
    const KernelTime t = p.db->gdn(l.kda         ? KernelTable::kKdaPrefill
                                   : op.gdn_conv ? KernelTable::kGdnConvPrefill
                                                 : KernelTable::kGdnPrefill,
                                   chunks, tokens, g);
    keep(t, i == 0);
    us += scaled_us(p, op, tokens, t.us) / chunks;
  }
  return us;
}

/// One instance of `op` at `rows`; `kernel` gets the cells of a table lookup.
double op_us(const MeasuredPlan& p, const Operator& op, double rows, KernelTime* kernel) {
  const KernelDb& db = *p.db;
  KernelTime t;
  switch (op.kind) {
    case OpKind::kGemm:
      t = db.gemm(p.gemm_dtype_of(op.format), rows, op.n, op.k);
      break;
    case OpKind::kMoe:
      if (p.moe_from_gemms) {
        t = moe_as_gemms(p, op, rows);
        break;
      }
      // Under expert parallelism the table's moe_tp is 1 and moe_ep the ep GPUs, else
      // moe_tp the experts' tensor-parallel group (tp x dp); `rows` are every
      // data-parallel rank's tokens (the table's tokens are the layer's input).
      t = db.moe(p.moe_dtype_of(op.format), rows, op.moe_hidden, op.moe_intermediate, op.moe_experts, op.moe_topk,
                 p.ops.ep > 1 ? 1 : static_cast<int>(expert_gpus(p.ops.tp, 1, p.ops.dp)), static_cast<int>(p.ops.ep));
      break;
    case OpKind::kAllreduce:
      t = collective(p, op.group > 0 ? op.group : static_cast<int>(p.ops.tp), rows * op.n);
      break;
    case OpKind::kGather:  // gathering to one rank moves half the bytes of an all-reduce
      t = db.allreduce(static_cast<int>(p.ops.tp), rows * op.n / 2);
      break;
    case OpKind::kElementwise:
      t.us = p.constants.launch_floor_us + rows * op.row_bytes / p.constants.hbm_bytes_per_s * 1e6;
      t.how = LookupHow::kApproximated;
      break;
    case OpKind::kAttention:
    case OpKind::kLinearAttention:
      break;  // priced per request by attention_layer_us, linear_layer_us
  }
  if (kernel != nullptr) *kernel = t;
  return t.us;
}

/// Lookups the result warns about: clamped, extrapolated, approximated or missing.
bool outside_grid(LookupHow how) {
  return how != LookupHow::kExact && how != LookupHow::kInterpolated && how != LookupHow::kEnvelope;
}

void add_to_category(MeasuredTotals* t, OpKind kind, double us) {
  // Indexed by OpKind: gemm, attention, moe, all-reduce, gather, elementwise, linear attention.
  static double MeasuredTotals::*const kCategory[] = {
      &MeasuredTotals::gemm_us, &MeasuredTotals::attention_us,   &MeasuredTotals::moe_us,      &MeasuredTotals::comm_us,
      &MeasuredTotals::comm_us, &MeasuredTotals::elementwise_us, &MeasuredTotals::attention_us};
  t->*enum_entry(kCategory, kind, &MeasuredTotals::elementwise_us) += us;
}

/// The one pricing loop behind both entry points; `full` may be null, `memo` is read
/// and filled only without `full`.
MeasuredTotals price(const MeasuredPlan& p, const Step& s, MeasuredBreakdown* full, MeasuredRowsMemo* memo = nullptr) {
  MeasuredTotals t;
#if !defined(__EMSCRIPTEN__) || defined(STEPCALC_PLAN_MODULE)
  DecodeRowCache* const decode_rows = memo != nullptr ? &memo->decode_rows : nullptr;
#else
  DecodeRowCache* const decode_rows = nullptr;  // the first view keeps its bytes
#endif
  const StepRows r = rows_of(p, s);
  t.prefill_tokens = r.prefill_tokens;
  t.decode_tokens = r.decode_tokens;
  t.tokens = r.tokens;
  t.padded_tokens = r.padded;
  t.sampled = r.sampled;
  t.requests = static_cast<int64_t>(s.prefill.size() + s.decode.size());
  const double decode_share = r.tokens > 0 ? r.decode_tokens / r.tokens : 0;
  double attention_decode = 0, attention_prefill = 0;
  const std::vector<Operator>& ops = p.ops.ops;
  MeasuredRowsMemo::Entry* known = nullptr;  // these rows' operator times, priced before
  MeasuredRowsMemo::Entry* fill = nullptr;   // the entry this step's times go to
  if (memo != nullptr && full == nullptr) {
    bool hit = false;
    MeasuredRowsMemo::Entry& e = memo->slot(r.sampled, r.padded, &hit);
    if (hit) {
      known = &e;
    } else {
      fill = &e;
      e.sampled = e.padded = -1;  // invalid until every operator is in
      e.us.assign(ops.size(), 0);
      e.skipped.assign(ops.size(), 0);
      e.stored.assign(ops.size(), 0);
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operator& op = ops[i];
    if (known != nullptr && known->stored[i] != 0) {
      if (known->skipped[i] != 0) continue;
      t.gpu_us += known->us[i];
      add_to_category(&t, op.kind, known->us[i]);
      continue;
    }
    const double count = p.ops.count(op);
    const double rows = (op.rows == OpRows::kSampled ? r.sampled : r.padded) * op.row_scale;
    // Attention and the gated DeltaNet kernels depend on the requests (their lengths, the
    // decodes' count), not on the row counts only: never memoised.
    const bool by_rows =
        !(op.kind == OpKind::kAttention && !(op.mla_module && p.attention_path == AttentionPath::kMlaModule)) &&
        op.kind != OpKind::kLinearAttention;
    if (!(count > 0) || !(rows > 0)) {
      if (fill != nullptr && by_rows) fill->skipped[i] = 1, fill->stored[i] = 1;
      continue;
    }
    KernelTime kernel;
    double us_each = 0;
    if (op.mla_module && p.attention_path == AttentionPath::kMlaModule) {
      us_each = 0;  // inside the measured module's time
      kernel.how = LookupHow::kApproximated;
    } else if (op.kind == OpKind::kAttention) {
      AttentionCost local;
      AttentionCost& a = full != nullptr ? full->attention : local;
      us_each = attention_layer_us(p, s, &a, full != nullptr, memo != nullptr ? &memo->kv_spots : nullptr, decode_rows);
      attention_decode += count * (a.decode_us + a.fixed_us * decode_share);
      attention_prefill += count * (a.prefill_us + a.fixed_us * (1 - decode_share));
      if (p.sliding_share > 0) {  // the sliding layers read only the window's KV
        Step local_window;        // a simulation's memo keeps its buffers across steps
        Step& windowed = memo != nullptr ? memo->windowed : local_window;
        if (within_window(s, p.sliding_window, &windowed)) {
          AttentionCost w;
          const double slide_us =
              attention_layer_us(p, windowed, &w, false, memo != nullptr ? &memo->kv_spots : nullptr, decode_rows);
          const double share = p.sliding_share;
          us_each = (1 - share) * us_each + share * slide_us;
          attention_decode +=
              count * share * (w.decode_us + w.fixed_us * decode_share - a.decode_us - a.fixed_us * decode_share);
          attention_prefill +=
              count * share *
              (w.prefill_us + w.fixed_us * (1 - decode_share) - a.prefill_us - a.fixed_us * (1 - decode_share));
        }
      }
    } else if (op.kind == OpKind::kLinearAttention) {
      us_each = linear_layer_us(p, op, s, full != nullptr ? &kernel : nullptr);
      if (!(us_each > 0)) continue;  // no request of its phase in the step
      (op.gdn_prefill ? attention_prefill : attention_decode) += count * us_each;
    } else {
      us_each = scaled_us(p, op, rows, op_us(p, op, rows, full != nullptr ? &kernel : nullptr));
    }
    const double us = count * us_each;
    t.gpu_us += us;
    add_to_category(&t, op.kind, us);
    if (fill != nullptr && by_rows) fill->us[i] = us, fill->stored[i] = 1;
    if (full == nullptr) continue;
    OperatorCost c;
    c.op = static_cast<int>(i);
    c.count = count;
    c.rows = rows;
    c.us_each = us_each;
    c.us = us;
    c.kernel = kernel;
    if (op.kind == OpKind::kAttention) {
      c.bytes = count * full->attention.bytes;
      c.flops = count * full->attention.flops;
      c.kernel.table = KernelTable::kNone;
      c.bound = full->attention.bytes / p.db->gpu().hbm_bw_bytes_per_s * 1e6 < 0.5 * us_each ? "launch" : "memory";
    } else if (op.kind == OpKind::kLinearAttention) {
      // Its phase's tokens' activations and, per request, its state (read and written once).
      const double tokens = op.gdn_prefill ? r.prefill_tokens : r.decode_tokens;
      const double requests = d(static_cast<int64_t>(op.gdn_prefill ? s.prefill.size() : s.decode.size()));
      c.rows = tokens;
      c.bytes = count * (tokens * op.row_bytes + requests * op.state_bytes);
      c.flops = count * tokens * op.row_flops;
      c.bound = c.bytes / count / p.db->gpu().hbm_bw_bytes_per_s * 1e6 < 0.5 * us_each ? "launch" : "memory";
    } else {
      c.bytes = count * op_bytes(op, rows);
      c.flops = count * rows * op.row_flops;
      c.bound =
          op.mla_module && p.attention_path == AttentionPath::kMlaModule ? "module" : bound_of(p, op, us_each, rows);
    }
    full->operators.push_back(c);
  }
  if (fill != nullptr) fill->sampled = r.sampled, fill->padded = r.padded;
  const double non_attention = t.gpu_us - t.attention_us;
  t.decode_us = attention_decode + non_attention * decode_share;
  t.prefill_us = attention_prefill + non_attention * (1 - decode_share);
  t.cpu_us = p.cpu.step_us + p.cpu.per_request_us * d(t.requests);
  t.total_us = t.gpu_us + t.cpu_us;
  return t;
}

}  // namespace

double cuda_graph_tokens(double tokens, int max_graph_tokens) {
  if (!(tokens > 0) || tokens > max_graph_tokens) return tokens;
  if (tokens <= 4) return tokens <= 1 ? 1 : (tokens <= 2 ? 2 : 4);
  if (tokens <= 256) return std::ceil(tokens / 8) * 8;
  return std::min(256 + std::ceil((tokens - 256) / 16) * 16, static_cast<double>(max_graph_tokens));
}

MeasuredRowsMemo::Entry& MeasuredRowsMemo::slot(double sampled, double padded, bool* hit) {
  if (entries_.empty()) entries_.resize(kEntries);
  const auto key = static_cast<uint64_t>(sampled) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(padded);
  Entry& e = entries_[static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 58)];  // the top 6 bits: 64 slots
  *hit = e.sampled == sampled && e.padded == padded;
  return e;
}

MeasuredTotals price_measured_summary(const MeasuredPlan& plan, const Step& step, MeasuredRowsMemo* memo) {
  return price(plan, step, nullptr, memo);
}

void price_measured_full(const MeasuredPlan& plan, const Step& step, MeasuredBreakdown* out) {
  out->operators.clear();
  out->attention = AttentionCost{};
  out->warnings = plan.warnings;
  out->totals = price(plan, step, out);
  // Every lookup outside the measured grid, once per operator.
  for (const OperatorCost& c : out->operators) {
    const Operator& op = plan.ops.ops[static_cast<size_t>(c.op)];
    const LookupHow how = c.kernel.how;
    if (c.kernel.table == KernelTable::kNone || !outside_grid(how)) continue;
    out->warnings.push_back({std::string("table_") + lookup_how_name(how),
                             std::string(op.name) + ": " + plan.db->describe(c.kernel) + " (" + lookup_how_name(how) +
                                 " outside the measured grid)."});
  }
  // Every lookup where a lower-precision table was slower than BF16, once per operator.
  const auto outlier = [&](const std::string& what, const KernelTime& k) {
    out->warnings.push_back(
        {"table_outlier", what + ": the " + kernel_dtype_name(k.outlier_dtype) + " table gives " +
                              format_fixed(k.outlier_us, 2) + " us here, slower than bf16 (" + format_fixed(k.us, 2) +
                              " us) for the same work: a table outlier; the bf16 time is used (docs/KERNELS.md)."});
  };
  for (const OperatorCost& c : out->operators)
    if (c.kernel.outlier_us > 0) outlier(plan.ops.ops[static_cast<size_t>(c.op)].name, c.kernel);
  for (const AttentionLookup& l : out->attention.lookups)
    if (l.kernel.outlier_us > 0) {
      outlier("attention", l.kernel);
      break;
    }
  for (const AttentionLookup& l : out->attention.lookups) {
    const LookupHow how = l.kernel.how;
    if (!outside_grid(how)) continue;
    out->warnings.push_back(
        {std::string("table_") + lookup_how_name(how), std::string("attention: ") + plan.db->describe(l.kernel) + " (" +
                                                           lookup_how_name(how) + " outside the measured grid)."});
    break;
  }
}

}  // namespace stepcalc
