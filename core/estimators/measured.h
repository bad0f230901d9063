// SPDX-License-Identifier: Apache-2.0
// The `measured` mode: the forward pass vLLM runs for this model, operator by
// operator (ops/operators.h), each priced from the measured kernel tables of the GPU
// (kernels/kernel_db.h), plus the host CPU time of an engine step. Rules, figures
// and sources: docs/MEASURED-MODE.md.
//
// Use: build a MeasuredPlan once per (model, precision, tp, GPU tables) — it resolves
// the operator list and the table-derived constants — then price any number of steps
// with it. `price_measured_summary` computes times only and allocates nothing;
// `price_measured_full` also records every operator with its table cells.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/kernel_catalogue.h"
#include "kernels/kernel_db.h"
#include "ops/operators.h"
#include "request/request.h"

namespace stepcalc {

/// The two fitted parameters: the host's CPU time of one engine step (scheduling,
/// input preparation, sampling bookkeeping, output handling) and its growth per
/// request in the step. Fitted on data/calibration/ (docs/MEASURED-MODE.md).
struct MeasuredCpu {
  double step_us = 810;        ///< fitted: 813.7 (docs/ACCURACY.md, "The measured mode")
  double per_request_us = 13;  ///< fitted: 12.91
};

/// Figures derived once from the GPU's tables (see docs/MEASURED-MODE.md).
struct MeasuredConstants {
  double hbm_bytes_per_s = 0;   ///< effective HBM bandwidth: the fastest weight streaming measured (GEMM, m = 1)
  double launch_floor_us = 0;   ///< the cheapest kernel measured (smallest GEMM), under CUDA graphs
  double decode_fixed_us = 0;   ///< decode attention kernel with one 1-token sequence
  double prefill_fixed_us = 0;  ///< prefill attention kernel with one 1-token sequence
  int max_graph_tokens = 512;   ///< vLLM's largest CUDA-graph capture size by default
};

/// How attention is priced for this model on this GPU.
enum class AttentionPath : uint8_t {
  kStandard,        ///< decode/prefill attention tables at the model's heads, KV heads, head size
  kMlaModule,       ///< measured MLA module (0.24.0 tables): its DeepSeek-V3 projections are taken out;
                    ///< with DeepSeek sparse attention (ops.attention.topk > 0) the DSA module tables
  kMlaApproximated  ///< no MLA table: standard attention with the latent's KV bytes per token
};

/// Everything resolved once per request before its step is priced.
struct MeasuredPlan {
  OperatorList ops;
  std::shared_ptr<const KernelDb> db;
  MeasuredConstants constants;
  MeasuredCpu cpu;
  AttentionPath attention_path = AttentionPath::kStandard;
  KernelDtype kv_dtype = KernelDtype::kBf16;
  /// The table each weight format's GEMMs and fused MoE read (index: WeightFormat): its
  /// own dtype where measured, else the stand-in the plan chose and warned about.
  KernelDtype gemm_dtype[kKernelDtypeCount] = {KernelDtype::kBf16,  KernelDtype::kFp8,   KernelDtype::kFp8Block,
                                               KernelDtype::kNvfp4, KernelDtype::kMxfp4, KernelDtype::kInt4};
  KernelDtype moe_dtype[kKernelDtypeCount] = {KernelDtype::kBf16,  KernelDtype::kFp8,   KernelDtype::kFp8Block,
                                              KernelDtype::kNvfp4, KernelDtype::kMxfp4, KernelDtype::kInt4};
  KernelDtype gemm_dtype_of(WeightFormat f) const { return gemm_dtype[static_cast<int>(f)]; }
  KernelDtype moe_dtype_of(WeightFormat f) const { return moe_dtype[static_cast<int>(f)]; }
  bool moe_from_gemms = false;  ///< no MoE table: the experts as two GEMMs with their bytes and FLOPs
  /// Standard-attention geometry used for lookups (the model's, or the MLA stand-in).
  int attn_heads = 0, attn_kv_heads = 0, attn_head_dim = 0;
  double attn_scale = 1;                 ///< time factor on the looked-up attention (MLA stand-in bytes ratio)
  double mla_projection_us_per_row = 0;  ///< kMlaModule: projections inside the table, per token (subtracted)
  /// Sliding-window attention: the share of attention layers that attend within the window
  /// (ModelSpec::sliding_layers / layers) and the window; their attention is priced with
  /// each request's context cut to the window.
  double sliding_share = 0;
  int64_t sliding_window = 0;
  /// A GPU measured on no table (GpuSpec::kernels_from): the tables are its sibling's, and
  /// their times are scaled to it by the two datasheets. Time factors (sibling's figure over
  /// this GPU's): HBM-bound, BF16-compute-bound, interconnect-bound; all 1 otherwise.
  const GpuSpec* scaled_to = nullptr;
  double scale_hbm = 1, scale_bf16 = 1, scale_link = 1;
  std::vector<Warning> warnings;  ///< plan-level: approximations that hold for every step
};

/// The kernel pack parts (docs/KERNELS.md) pricing `request` reads on a GPU whose
/// tables are `set` (kernels/kernel_catalogue.h): "gemm-bf16" always, then the GEMM part of each
/// quantised format ("gemm-fp8", "gemm-fp8_block", "gemm-nvfp4"), "attention-bf16" or "attention-fp8",
/// "mla", "allreduce" (TP > 1), and "moe" (plus "moe-<format>" for the 4-bit and block-scaled
/// experts) as the model needs them.
std::vector<std::string> measured_kernel_parts(const Request& request, const KernelSet& set);

/// Resolves the plan of `request` on `db` (model spec, TP, precision from the request).
/// Errors: kernels_not_loaded (a part the request needs is missing), invalid_value at
/// `tp` (heads not divisible), unknown_gpu (no database), unsupported at `quantization`
/// (a weight format the GPU's tables do not measure), invalid_value at `quantization`
/// (a different format than the checkpoint's own).
Expected<MeasuredPlan> plan_measured(const Request& request, std::shared_ptr<const KernelDb> db);

/// Step times, in microseconds. `prefill_us`/`decode_us` attribute the GPU time to the
/// phases (operators scaled by rows: by token share; attention: each phase's own part).
struct MeasuredTotals {
  double gpu_us = 0;
  double cpu_us = 0;
  double total_us = 0;
  double gemm_us = 0, attention_us = 0, moe_us = 0, comm_us = 0, elementwise_us = 0;
  double prefill_us = 0, decode_us = 0;
  double prefill_tokens = 0, decode_tokens = 0;
  double tokens = 0, padded_tokens = 0, sampled = 0;
  int64_t requests = 0;
};

/// One attention lookup of the step (requests grouped by length).
struct AttentionLookup {
  bool prefill = false;
  double batch = 0;    ///< the table batch it was read at
  double length = 0;   ///< KV length (decode) or sequence length (prefill)
  double prefix = 0;   ///< prefill: cached prefix of the chunk
  int64_t count = 0;   ///< requests priced by it
  double time_us = 0;  ///< their summed share, per layer
  KernelTime kernel;   ///< the table cells read
};

/// One operator of the step as priced.
struct OperatorCost {
  int op = 0;              ///< index into plan.ops.ops
  double count = 0;        ///< instances in the step
  double rows = 0;         ///< m (GEMM), tokens (MoE, elementwise), elements / n (collectives)
  double us_each = 0;      ///< one instance
  double us = 0;           ///< count * us_each
  double bytes = 0;        ///< HBM bytes moved in the step (all instances)
  double flops = 0;        ///< FLOPs in the step (all instances)
  KernelTime kernel;       ///< the table cells (table kNone: modelled)
  const char* bound = "";  ///< "compute", "memory", "launch", "communication"
};

/// The attention kernel of one layer, split as priced.
struct AttentionCost {
  double fixed_us = 0;          ///< one launch's fixed cost (counted once per layer)
  double decode_us = 0;         ///< decode requests' variable work
  double prefill_us = 0;        ///< prefill chunks' variable work
  double flops = 0, bytes = 0;  ///< per layer
  std::vector<AttentionLookup> lookups;
};

struct MeasuredBreakdown {
  MeasuredTotals totals;
  std::vector<OperatorCost> operators;
  AttentionCost attention;
  std::vector<Warning> warnings;  ///< the plan's and this step's
};

/// The times of the operators whose time depends on the step's row counts only (all
/// but attention), kept for the steps after: a simulation's steps mostly repeat their
/// row counts. Direct-mapped on (sampled rows, padded rows); one memo serves one plan.
class MeasuredRowsMemo {
 public:
  struct Entry {
    double sampled = -1, padded = -1;  ///< the key; -1: empty
    std::vector<double> us;            ///< per operator: count x time each
    std::vector<uint8_t> skipped;      ///< per operator: 1 when not run at these rows
    std::vector<uint8_t> stored;       ///< per operator: 1 when `us` holds its time
  };
  /// The entry for these rows (`*hit` true when it holds them), else the slot to fill.
  Entry& slot(double sampled, double padded, bool* hit);
  DecodeKvSpots kv_spots;  ///< where the decodes' KV lengths fall in the decode table
#if !defined(__EMSCRIPTEN__) || defined(STEPCALC_PLAN_MODULE)
  DecodeRowCache decode_rows;  ///< the decode table's rows at the last batches (not in the first view)
#endif
  Step windowed;  ///< a step's sliding-window copy, its buffers kept

 private:
  static constexpr size_t kEntries = 64;
  std::vector<Entry> entries_;
};

/// Times only; allocates nothing (with a memo: nothing once its entries are filled).
/// With `memo` (one per plan), the operators priced at the same row counts before are
/// read from it: bit-identical to pricing them again.
MeasuredTotals price_measured_summary(const MeasuredPlan& plan, const Step& step, MeasuredRowsMemo* memo = nullptr);

/// Every operator with its shape, cells, bytes, FLOPs and bound.
void price_measured_full(const MeasuredPlan& plan, const Step& step, MeasuredBreakdown* out);

/// vLLM's CUDA-graph padding of `tokens` (capture sizes 1, 2, 4, 8..248 by 8,
/// 256..`max_graph_tokens` by 16); beyond the largest, no padding.
double cuda_graph_tokens(double tokens, int max_graph_tokens);

}  // namespace stepcalc
