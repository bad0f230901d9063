// SPDX-License-Identifier: Apache-2.0
// The `measured` mode's plan: operator list, attention path and the constants the
// GPU's own tables give (docs/MEASURED-MODE.md, "Figures from the tables").
#include <algorithm>
#include <string>

#include "estimators/measured.h"
#include "estimators/measured_attention.h"
#include "json/text_format.h"
#include "kernels/gpu_spec.h"
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
  if (cov.has_mla && mla_module_tables(db.version())) {  // with an indexer: the DSA tables (has_dsa checked)
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

KernelDtype as_dtype(WeightFormat f) { return static_cast<KernelDtype>(static_cast<int>(f)); }

/// Whether the model runs MLP GEMMs outside the fused MoE (dense layers or shared experts).
bool has_mlp_gemms(const ModelSpec& spec) { return spec.num_dense_layers() > 0 || spec.moe.shared_intermediate > 0; }

std::string gemm_part(KernelDtype d) { return std::string("gemm-") + kernel_dtype_name(d); }
std::string moe_part(KernelDtype d) {
  return d == KernelDtype::kBf16 || d == KernelDtype::kFp8 ? "moe" : std::string("moe-") + kernel_dtype_name(d);
}

/// Which table dtype each weight format reads on a GPU whose tables are `cov`, and what
/// a stand-in or a refusal says. A format is read from its own table where measured.
/// FP8 without FP8 tables (A100: no FP8 tensor cores) reads BF16, as before; block-scaled
/// FP8 without its tables reads per-tensor FP8. The 4-bit formats have no stand-in: a
/// GPU that does not measure them refuses (never priced as another precision).
struct DtypeChoice {
  KernelDtype gemm[kKernelDtypeCount];
  KernelDtype moe[kKernelDtypeCount];
  std::vector<Warning> warnings;
  Error error;
  bool failed = false;
};

DtypeChoice choose_dtypes(const ModelSpec& spec, const Precision& p, const KernelCoverage& cov, const std::string& gpu,
                          const std::string& version) {
  DtypeChoice c;
  for (int i = 0; i < kKernelDtypeCount; ++i) c.gemm[i] = c.moe[i] = static_cast<KernelDtype>(i);
  auto refuse = [&](WeightFormat f, const std::string& what) {
    if (c.failed) return;
    c.failed = true;
    c.error = Error{"unsupported", "quantization",
                    std::string(weight_format_name(f)) + " " + what + " is not measured on " + gpu + " " + version +
                        " (docs/KERNELS.md lists what each GPU measures); it is not priced as another precision."};
  };
  // Dense GEMMs: the attention and MLP groups (and the experts when no MoE table exists).
  const bool moe_tables = !cov.moe_dtypes.empty();
  std::vector<WeightFormat> dense = {p.attention};
  if (has_mlp_gemms(spec)) dense.push_back(p.mlp);
  if (spec.is_moe() && !moe_tables) dense.push_back(p.experts);
  for (WeightFormat f : dense) {
    const KernelDtype want = as_dtype(f);
    if (f == WeightFormat::kBf16 || has_dtype(cov.gemm_dtypes, want)) continue;
    KernelDtype& slot = c.gemm[static_cast<int>(f)];
    if (f == WeightFormat::kFp8Block && has_dtype(cov.gemm_dtypes, KernelDtype::kFp8)) {
      slot = KernelDtype::kFp8;
      c.warnings.push_back({"fp8_block_scaled", "Block-scaled FP8 GEMMs are not measured on " + gpu + " " + version +
                                                    "; they are priced with the per-tensor FP8 GEMM table."});
    } else if (f == WeightFormat::kFp8 || f == WeightFormat::kFp8Block) {
      slot = KernelDtype::kBf16;
      c.warnings.push_back({"fp8_not_measured", gpu + " has no measured FP8 GEMMs (no FP8 tensor cores; vLLM runs "
                                                      "FP8 weights with weight-only kernels there); they are priced "
                                                      "as BF16 kernels, their bytes as FP8."});
    } else {
      refuse(f, "GEMM (dense and attention layers)");
    }
  }
  if (spec.is_moe() && moe_tables && p.experts != WeightFormat::kBf16) {
    const WeightFormat f = p.experts;
    KernelDtype& slot = c.moe[static_cast<int>(f)];
    if (!has_dtype(cov.moe_dtypes, as_dtype(f))) {
      if (f == WeightFormat::kFp8Block && has_dtype(cov.moe_dtypes, KernelDtype::kFp8)) {
        slot = KernelDtype::kFp8;
        c.warnings.push_back({"fp8_block_scaled", "Block-scaled FP8 fused MoE is not measured on " + gpu + " " +
                                                      version +
                                                      "; the experts are priced with the per-tensor FP8 "
                                                      "MoE table."});
      } else if (f == WeightFormat::kFp8 || f == WeightFormat::kFp8Block) {
        slot = KernelDtype::kBf16;
        c.warnings.push_back({"fp8_moe_not_measured", "FP8 fused MoE is not measured on " + gpu +
                                                          "; the experts are priced with the BF16 MoE table."});
      } else {
        refuse(f, "fused MoE");
      }
    }
  }
  return c;
}

std::vector<NeededTable> needed_tables(const Request& r, const KernelCoverage& cov, const std::string& gpu,
                                       const std::string& version) {
  const ModelSpec& spec = r.model.spec;
  const Precision p = precision_of(spec, r.quantization, r.kv_cache);
  const DtypeChoice c = choose_dtypes(spec, p, cov, gpu, version);
  std::vector<NeededTable> out = {{KernelTable::kGemm, KernelDtype::kBf16, "gemm-bf16"}};
  // The parts only some models read first: a missing one is the part kernels_not_loaded names,
  // and the page fetches those only when named (web/kernel-parts.js).
  if (spec.is_sparse_mla() && cov.has_dsa) out.push_back({KernelTable::kDsaDecode, KernelDtype::kBf16, "dsa"});
  const bool kda = spec.linear.kda;
  if (spec.is_hybrid_linear() && (kda ? cov.has_kda : cov.has_gdn))
    out.push_back({kda ? KernelTable::kKdaDecode : KernelTable::kGdnDecode, KernelDtype::kBf16, kda ? "kda" : "gdn"});
  auto add = [&](KernelTable t, KernelDtype d, const std::string& part) {
    for (const NeededTable& n : out)
      if (n.table == t && n.dtype == d) return;
    out.push_back({t, d, part});
  };
  const bool moe_tables = !cov.moe_dtypes.empty();
  for (WeightFormat f : {p.attention, has_mlp_gemms(spec) ? p.mlp : p.attention}) {
    const KernelDtype d = c.gemm[static_cast<int>(f)];
    if (has_dtype(cov.gemm_dtypes, d)) add(KernelTable::kGemm, d, gemm_part(d));
  }
  if (spec.is_moe() && !moe_tables) {
    const KernelDtype d = c.gemm[static_cast<int>(p.experts)];
    if (has_dtype(cov.gemm_dtypes, d)) add(KernelTable::kGemm, d, gemm_part(d));
  }
  if (spec.is_mla() && cov.has_mla && mla_module_tables(version)) {
    if (!spec.is_sparse_mla()) out.push_back({KernelTable::kMlaDecode, KernelDtype::kBf16, "mla"});  // else dsa
  } else {
    const bool fp8 = p.kv_fp8 && has_dtype(cov.kv_dtypes, KernelDtype::kFp8);
    out.push_back({KernelTable::kDecodeAttention, fp8 ? KernelDtype::kFp8 : KernelDtype::kBf16,
                   fp8 ? "attention-fp8" : "attention-bf16"});
  }
  if (r.tp > 1 || r.dp > 1) out.push_back({KernelTable::kAllreduce, KernelDtype::kBf16, "allreduce"});
  if (spec.is_moe() && moe_tables) {
    const KernelDtype d = c.moe[static_cast<int>(p.experts)];
    if (has_dtype(cov.moe_dtypes, KernelDtype::kBf16) || d == KernelDtype::kFp8)
      add(KernelTable::kMoe, KernelDtype::kBf16, "moe");  // the BF16 experts: the outlier guard's reference
    if (has_dtype(cov.moe_dtypes, d) && d != KernelDtype::kBf16) add(KernelTable::kMoe, d, moe_part(d));
  }
  return out;
}

}  // namespace

std::vector<std::string> measured_kernel_parts(const Request& request, const KernelSet& set) {
  std::vector<std::string> parts;
  for (const NeededTable& t : needed_tables(request, set.coverage, set.gpu, set.version)) {
    if (std::find(parts.begin(), parts.end(), t.part) == parts.end()) parts.push_back(t.part);
  }
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
  if (spec.linear.num_k_heads % r.tp != 0)  // 0 without linear attention; the value heads are a multiple
    return make_error("invalid_value", "tp",
                      "The linear-attention heads are not divisible by tp: vLLM cannot split them.");
  MeasuredPlan plan;
  plan.db = std::move(db);
  if (spec.sliding_window > 0 && spec.num_layers > 0) {
    plan.sliding_share = static_cast<double>(spec.sliding_layers) / static_cast<double>(spec.num_layers);
    plan.sliding_window = spec.sliding_window;
  }
  const KernelDb& kdb = *plan.db;
  if (const GpuSpec* asked = find_gpu_spec(r.hardware.gpu); asked != nullptr && asked->kernels_from == kdb.gpu().name) {
    const GpuSpec& s = kdb.gpu();
    const auto factor = [](double sibling, double self) { return sibling > 0 && self > 0 ? sibling / self : 1.0; };
    plan.scaled_to = asked;
    plan.scale_hbm = factor(s.hbm_bw_bytes_per_s, asked->hbm_bw_bytes_per_s);
    plan.scale_bf16 = factor(s.bf16_tflops, asked->bf16_tflops);
    plan.scale_link = factor(s.nvlink_bw_bytes_per_s, asked->nvlink_bw_bytes_per_s);
    const auto x = [](double v) { return format_fixed(v, 2) + "x"; };
    plan.warnings.push_back(
        {"gpu_tables_scaled", "No vLLM kernel tables were measured on " + asked->name + ": its operators are " +
                                  s.name + "'s measured times scaled by the two datasheets (memory-bound work " +
                                  x(plan.scale_hbm) + ", compute-bound " + x(plan.scale_bf16) + ", " +
                                  asked->interconnect + " communication " + x(plan.scale_link) +
                                  " above the launch and link latency). No measured runs check it."});
  }
  // What the GPU measures (the catalogue), not only what is loaded: a missing part is an error.
  const KernelSet* set = find_kernel_set(kdb.gpu().name, kdb.version());
  const KernelCoverage& cov = set != nullptr ? set->coverage : kdb.coverage();
  if (r.quantization != WeightFormat::kBf16 && spec.quant.quantized() &&
      !same_format_family(spec.quant.format, r.quantization))
    return make_error("invalid_value", "quantization",
                      std::string("The checkpoint is already quantised to ") + weight_format_name(spec.quant.format) +
                          " (quant_method \"" + spec.quant.method +
                          "\"); vLLM runs it as stored: leave quantization "
                          "out or set it to \"none\".");
  if ((spec.is_hybrid_linear() && !(spec.linear.kda ? cov.has_kda : cov.has_gdn)) ||
      (spec.is_sparse_mla() && !cov.has_dsa))
    return make_error("unsupported", "kernels",
                      std::string(spec.is_sparse_mla() ? "DeepSeek sparse attention (index_topk)"
                                  : spec.linear.kda    ? "Kimi delta attention (linear_attn_config)"
                                                       : "Gated DeltaNet (linear attention)") +
                          " is not measured on " + kdb.gpu().name + " " + kdb.version() +
                          " (docs/KERNELS.md lists the tables that measure it).");
  Precision precision = precision_of(spec, r.quantization, r.kv_cache);
  const DtypeChoice choice = choose_dtypes(spec, precision, cov, kdb.gpu().name, kdb.version());
  if (choice.failed) return choice.error;
  for (const NeededTable& t : needed_tables(r, cov, kdb.gpu().name, kdb.version()))
    if (!kdb.has(t.table, t.dtype))
      return make_error("kernels_not_loaded", "gpu",
                        "The " + t.part + " tables of " + kdb.gpu().name + " " + kdb.version() +
                            " are not loaded; load that kernel pack part before pricing in the measured mode.");
  if (precision.kv_fp8 && !has_dtype(cov.kv_dtypes, KernelDtype::kFp8)) {
    precision.kv_fp8 = false;
    plan.warnings.push_back({"kv_fp8_not_measured", "An FP8 KV cache is not measured on " + kdb.gpu().name +
                                                        "; attention is priced with a BF16 KV cache."});
  }
  plan.kv_dtype = precision.kv_fp8 ? KernelDtype::kFp8 : KernelDtype::kBf16;
  std::copy(std::begin(choice.gemm), std::end(choice.gemm), std::begin(plan.gemm_dtype));
  std::copy(std::begin(choice.moe), std::end(choice.moe), std::begin(plan.moe_dtype));
  for (const Warning& w : choice.warnings) plan.warnings.push_back(w);
  if (spec.is_moe() && cov.moe_dtypes.empty()) {
    plan.moe_from_gemms = true;
    plan.warnings.push_back({"moe_approximated", "No fused-MoE table is measured on " + kdb.gpu().name +
                                                     "; the experts are priced as two GEMMs (gate_up, down) "
                                                     "reading the reached experts' weights, with their FLOPs."});
  }
  plan.ops = build_operator_list(spec, precision, r.tp, r.ep, r.dp);
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
