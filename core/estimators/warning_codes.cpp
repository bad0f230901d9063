// SPDX-License-Identifier: Apache-2.0
#include "estimators/warning_codes.h"

namespace stepcalc {
namespace {

constexpr const char* kNames[kNumWarningCodes] = {
    "moe_ignored",
    "mla_ignored",
    "sliding_window_ignored",
    "head_dim_differs",
    "dtype_assumed",
    "attention_config_nearest",
    "head_dim_not_integer",
    "tp_does_not_divide_heads",
    "tp_above_kv_heads",
    "decode_tp_nearest",
    "gemm_shape_beyond_table",
    "gemm_shape_not_measured",
    "gemm_m_below_table",
    "gemm_m_above_table",
    "gemm_mfu_fallback",
    "prefill_bucket_clamped",
    "prefill_mfu_fallback",
    "prefill_one_token",
    "prefill_zero_tokens",
    "prefill_bucketed",
    "decode_outside_table",
    "decode_missing_corner",
    "decode_mfu_fallback",
    "decode_mfu_arithmetic_mean",
    "mixed_batch_overlap",
    "no_communication_term",
    "decode_latency_tp_scaled",
    "min_step_floor",
    "tp_does_not_divide_kv_heads",
    "gpu_h100_tables",
    "fp8_block_scaled",
    "quantization_not_priced",
    "moe_without_topk",
    "sliding_window_approximated",
    "chunked_attention_approximated",
    "activation_approximated",
    "vision_not_priced",
    "sparse_attention_approximated",
    "mtp_not_priced",
    "one_byte_weights",
    "head_dim_not_measured",
    "mla_approximated",
    "mla_shape_differs",
    "kv_fp8_not_measured",
    "fp8_not_measured",
    "moe_approximated",
    "fp8_moe_not_measured",
    "table_clamped",
    "table_extrapolated",
    "table_approximated",
    "table_missing",
    "table_outlier",
    "gpu_tables_scaled",
    "beyond_context",
    "model_does_not_fit",
    "kv_cache_overflow",
    "cuda_graphs_exceed_headroom",
};

}  // namespace

const char* warning_code_name(int code) { return code >= 0 && code < kNumWarningCodes ? kNames[code] : "?"; }

int warning_code_index(std::string_view name) {
  for (int c = 0; c < kNumWarningCodes; ++c)
    if (name == kNames[c]) return c;
  return -1;
}

std::vector<std::string> WarningSet::names() const {
  std::vector<std::string> out;
  for (int c = 0; c < kNumWarningCodes; ++c)
    if (has(static_cast<WarningCode>(c))) out.emplace_back(kNames[c]);
  return out;
}

}  // namespace stepcalc
