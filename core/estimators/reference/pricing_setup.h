// SPDX-License-Identifier: Apache-2.0
// What a pricing resolves before it looks at the step: the model's derived
// constants, the mode's switches and the tables it reads (model x GPU x TP). A
// sweep, a batch or a simulation resolves it once and prices every step against it.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "estimators/step_result.h"
#include "estimators/warning_codes.h"
#include "kernels/reference/mfu_lookup.h"
#include "kernels/reference/mfu_tables.h"
#include "request/corrected_config.h"
#include "request/request.h"

namespace stepcalc {

/// The constants every phase uses (reference-model.md), as doubles.
struct ModelConstants {
  double peak_flops = 0;  ///< FLOP/s
  double peak_bw = 0;     ///< effective bytes/s (peak x bwEfficiencyFactor)
  double tp_scaling = 0;  ///< 1 / tp
  double layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, bpp = 0;
  double head_dim = 0;        ///< d / H, integer division (GEMM shapes, attention FLOPs)
  double head_dim_float = 0;  ///< d / H, floating (memory bytes)
  double kv_dim = 0;          ///< Hkv * head_dim (integer)
  double weights_bytes = 0;   ///< all layers, unsharded
  double kv_bytes_per_token = 0;
  std::array<double, kNumGemmKinds> gemm_k{}, gemm_n{};  ///< each GEMM's weight shape (K, N)
  /// The first GEMM kind with the same weight shape (itself if none): q/o, k/v and
  /// gate/up share theirs, so a step looks up 4 GEMMs, not 7.
  std::array<int, kNumGemmKinds> same_shape_as{};
  std::array<GemmPairChoice, kNumGemmKinds> gemm_pairs{};  ///< table pair per GEMM (model-only)
};

/// Everything about a request except its step, resolved for pricing.
struct PricingSetup {
  /// Distinct for every prepare_pricing call (copies share it): what a memo of
  /// per-setup terms keys on, since an address can be reused.
  uint64_t id = 0;
  const MfuTables* tables = nullptr;
  CorrectedSettings corrected;  ///< the mode's switches with the request's overrides
  ModelConstants constants;
  const PrefillTable* attn = nullptr;         ///< attention config used (nearest measured)
  const DecodeTable* decode_table = nullptr;  ///< null: that config has no decode table
  std::string attn_config_model;              ///< "H-Hkv-D" of the model
  int64_t decode_mfu_tp_used = 0;             ///< TP of decode_table (0 without one)
  WarningSet warnings;                        ///< codes that hold for every step
  WarningSet decode_warnings;                 ///< codes that hold for every step with decodes
};

/// Checks what the reference refuses to price (heads, layers, width, bytes per
/// parameter, hardware constants, tp); the error names the field.
Expected<bool> validate_for_pricing(const Request& request);

/// Validates `request` (its step is not read) and resolves its setup against `tables`.
Expected<PricingSetup> prepare_pricing(const Request& request, const MfuTables& tables);

/// True when `a` and `b` price any step identically: the same model shape and notes,
/// hardware, tp, mode and corrected overrides (numbers compared bit for bit).
bool same_pricing_inputs(const Request& a, const Request& b);

}  // namespace stepcalc
