// SPDX-License-Identifier: Apache-2.0
// The `measured` mode's plan: operator list, attention path and the constants the
// GPU's own tables give (docs/MEASURED-MODE.md, "Figures from the tables").
#include <algorithm>
#include <string>

#include "estimators/measured.h"
#include "estimators/measured_attention.h"
#include "kernels/kernel_catalogue.h"

namespace stepcalc {
namespace {

bool has_dtype(const std::vector<KernelDtype>& list, KernelDtype dtype) {
  return std::find(list.begin(), list.end(), dtype) != list.end();
}

bool usable(LookupHow how) {
  return how == LookupHow::kExact || how == LookupHow::kInterpolated || how == LookupHow::kEnvelope;
}

/// Effective HBM bandwidth: the fastest BF16 weight streaming the GEMM table measures
/// (one row, large square-ish weights, where the kernel only reads its weights).
double streaming_bandwidth(const KernelDb& db) {
  static const double kShapes[][2] = {{16384, 16384}, {8192, 16384}, {16384, 8192}, {8192, 8192}, {4096, 4096}};
  double best = 0;
  for (const auto& nk : kShapes) {
    const KernelTime t = db.gemm(KernelDtype::kBf16, 1, nk[0], nk[1]);
    if (usable(t.how) && t.us > 0) best = std::max(best, nk[0] * nk[1] * 2 / (t.us * 1e-6));
  }
  return best > 0 ? best : db.gpu().hbm_bw_bytes_per_s;
}

/// Launch floor: the cheapest kernel the GEMM table measures (its smallest shapes).
double launch_floor_us(const KernelDb& db) {
  double best = 0;
  for (double m : {1.0, 8.0})
    for (double n : {32.0, 64.0})
      for (double k : {32.0, 64.0}) {
        const KernelTime t = db.gemm(KernelDtype::kBf16, m, n, k);
        if (usable(t.how) && t.us > 0 && (best == 0 || t.us < best)) best = t.us;
      }
  return best;
}

/// The 0.24.0 MLA tables time the whole DeepSeek-V3 attention module under CUDA graphs
/// and grow with heads, batch and length. The 0.14.0 ones read 110-190 us for any
/// small shape and barely grow (e.g. H100: 1 head, 1 token 129 us; 128 heads, 1024
/// tokens 261 us): launch-bound timings, not what a graph replay costs, so they are
/// not used (bench_data/aic/h100/vllm-0.14.0/mla_prefill.csv).
bool mla_module_tables(const std::string& version) { return version != "vllm-0.14.0"; }

void choose_attention(const ModelSpec& spec, int64_t tp, const KernelCoverage& cov, MeasuredPlan* plan) {
  const KernelDb& db = *plan->db;
  plan->attn_heads = static_cast<int>(spec.num_heads / tp);
  if (!spec.is_mla()) {
    plan->attention_path = AttentionPath::kStandard;
    plan->attn_kv_heads = static_cast<int>(kv_heads_per_gpu(spec, tp));
    plan->attn_head_dim = static_cast<int>(spec.head_dim);
    const auto& dims = cov.attention_head_dims;
    if (std::find(dims.begin(), dims.end(), plan->attn_head_dim) == dims.end())
      plan->warnings.push_back({"head_dim_not_measured", "Attention with head size " +
                                                             std::to_string(plan->attn_head_dim) +
                                                             " is not measured on " + db.gpu().name +
                                                             "; the nearest measured head size is scaled."});
    return;
  }
  if (cov.has_mla && mla_module_tables(db.version())) {
    plan->attention_path = AttentionPath::kMlaModule;
    if (spec.mla.kv_lora_rank != 512 || spec.mla.qk_rope_head_dim != 64)
      plan->warnings.push_back(
          {"mla_shape_differs", "The MLA tables measure DeepSeek-V3's latent (512 + 64 rotary); this model's " +
                                    std::to_string(spec.mla.kv_lora_rank) + " + " +
                                    std::to_string(spec.mla.qk_rope_head_dim) + " is priced at that size."});
    return;
  }
  // No MLA table: a GQA kernel with head size 128 and two KV heads reads 512 bytes of
  // K and V per token and head pair; scale by the latent's (kv_lora_rank + rope) / 512.
  plan->attention_path = AttentionPath::kMlaApproximated;
  plan->attn_kv_heads = std::min(2, std::max(1, plan->attn_heads));
  plan->attn_head_dim = 128;
  plan->attn_scale = static_cast<double>(spec.mla.kv_lora_rank + spec.mla.qk_rope_head_dim) / 512.0;
  plan->warnings.push_back({"mla_approximated", "No usable MLA tables for " + db.gpu().name + " " + db.version() +
                                                    "; latent attention is priced as grouped-query attention "
                                                    "(2 KV heads of 128) scaled to the latent's bytes per token."});
}

/// A table the plan reads, as (table, dtype) and as the pack part holding it.
struct NeededTable {
  KernelTable table;
  KernelDtype dtype;
  std::string part;
};

std::vector<NeededTable> needed_tables(const Request& r, const KernelCoverage& cov, const std::string& version) {
  const ModelSpec& spec = r.model.spec;
  const Precision p = precision_of(spec, r.quantize_fp8, r.kv_cache_fp8);
  std::vector<NeededTable> out = {{KernelTable::kGemm, KernelDtype::kBf16, "gemm-bf16"}};
  if ((p.attention_fp8 || p.mlp_fp8 || p.experts_fp8) && has_dtype(cov.gemm_dtypes, KernelDtype::kFp8))
    out.push_back({KernelTable::kGemm, KernelDtype::kFp8, "gemm-fp8"});
  if (spec.is_mla() && cov.has_mla && mla_module_tables(version)) {
    out.push_back({KernelTable::kMlaDecode, KernelDtype::kBf16, "mla"});
  } else {
    const bool fp8 = p.kv_fp8 && has_dtype(cov.kv_dtypes, KernelDtype::kFp8);
    out.push_back({KernelTable::kDecodeAttention, fp8 ? KernelDtype::kFp8 : KernelDtype::kBf16,
                   fp8 ? "attention-fp8" : "attention-bf16"});
  }
  if (r.tp > 1) out.push_back({KernelTable::kAllreduce, KernelDtype::kBf16, "allreduce"});
  if (spec.is_moe() && !cov.moe_dtypes.empty()) {
    const bool fp8 = p.experts_fp8 && has_dtype(cov.moe_dtypes, KernelDtype::kFp8);
    out.push_back({KernelTable::kMoe, fp8 ? KernelDtype::kFp8 : KernelDtype::kBf16, "moe"});
  }
  return out;
}

}  // namespace

std::vector<std::string> measured_kernel_parts(const Request& request, const KernelSet& set) {
  std::vector<std::string> parts;
  for (const NeededTable& t : needed_tables(request, set.coverage, set.version)) parts.push_back(t.part);
  return parts;
}

Expected<MeasuredPlan> plan_measured(const Request& r, std::shared_ptr<const KernelDb> db) {
  if (db == nullptr) return make_error("unknown_gpu", "gpu", "No measured kernel tables are loaded for this GPU.");
  const ModelSpec& spec = r.model.spec;
  if (spec.num_layers <= 0 || spec.hidden_size <= 0 || spec.num_heads <= 0)
    return make_error("invalid_value", "model", "The model has no layers, width or heads to price.");
  if (spec.num_heads % r.tp != 0)
    return make_error("invalid_value", "tp",
                      "num_attention_heads (" + std::to_string(spec.num_heads) + ") is not divisible by tp (" +
                          std::to_string(r.tp) + "): vLLM cannot split the heads over the GPUs.");
  MeasuredPlan plan;
  plan.db = std::move(db);
  const KernelDb& kdb = *plan.db;
  // What the GPU measures (the catalogue), not only what is loaded: a missing part is an error.
  const KernelSet* set = find_kernel_set(kdb.gpu().name, kdb.version());
  const KernelCoverage& cov = set != nullptr ? set->coverage : kdb.coverage();
  for (const NeededTable& t : needed_tables(r, cov, kdb.version()))
    if (!kdb.has(t.table, t.dtype))
      return make_error("kernels_not_loaded", "gpu",
                        "The " + t.part + " tables of " + kdb.gpu().name + " " + kdb.version() +
                            " are not loaded; load that kernel pack part before pricing in the measured mode.");
  Precision precision = precision_of(spec, r.quantize_fp8, r.kv_cache_fp8);
  if (precision.kv_fp8 && !has_dtype(cov.kv_dtypes, KernelDtype::kFp8)) {
    precision.kv_fp8 = false;
    plan.warnings.push_back({"kv_fp8_not_measured", "An FP8 KV cache is not measured on " + kdb.gpu().name +
                                                        "; attention is priced with a BF16 KV cache."});
  }
  plan.kv_dtype = precision.kv_fp8 ? KernelDtype::kFp8 : KernelDtype::kBf16;
  const bool fp8_weights = precision.attention_fp8 || precision.mlp_fp8 || precision.experts_fp8;
  if (fp8_weights && !has_dtype(cov.gemm_dtypes, KernelDtype::kFp8)) {
    plan.fp8_kernels = false;
    plan.warnings.push_back({"fp8_not_measured", kdb.gpu().name +
                                                     " has no measured FP8 GEMMs (no FP8 tensor cores; vLLM runs "
                                                     "FP8 weights with weight-only kernels there); they are priced "
                                                     "as BF16 kernels, their bytes as FP8."});
  }
  if (spec.is_moe() && cov.moe_dtypes.empty()) {
    plan.moe_from_gemms = true;
    plan.warnings.push_back({"moe_approximated", "No fused-MoE table is measured on " + kdb.gpu().name +
                                                     "; the experts are priced as two GEMMs (gate_up, down) "
                                                     "reading the reached experts' weights, with their FLOPs."});
  } else if (precision.experts_fp8 && spec.is_moe() && !has_dtype(cov.moe_dtypes, KernelDtype::kFp8)) {
    plan.fp8_moe = false;
    plan.warnings.push_back({"fp8_moe_not_measured", "FP8 fused MoE is not measured on " + kdb.gpu().name +
                                                         "; the experts are priced with the BF16 MoE table."});
  }
  plan.ops = build_operator_list(spec, precision, r.tp);
  for (const Warning& w : plan.ops.notes) plan.warnings.push_back(w);
  choose_attention(spec, r.tp, cov, &plan);
  MeasuredConstants& c = plan.constants;
  c.hbm_bytes_per_s = streaming_bandwidth(kdb);
  c.launch_floor_us = launch_floor_us(kdb);
  c.decode_fixed_us = decode_kernel_us(plan, 1, 1, nullptr);
  c.prefill_fixed_us = prefill_kernel_us(plan, 1, 1, nullptr);
  return plan;
}

}  // namespace stepcalc
