// SPDX-License-Identifier: Apache-2.0
// The priced step: the integer step time and everything that explains it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "kernels/reference/mfu_lookup.h"
#include "request/corrected_config.h"
#include "request/request.h"

namespace stepcalc {

/// The seven weight GEMMs of one layer, in the reference's summation order.
enum GemmKind { kQ, kK, kV, kO, kGate, kUp, kDown, kNumGemmKinds };
const char* gemm_kind_name(int kind);

/// The phase that sets the step's time (`overhead` for an empty step).
enum class StepBound : uint8_t { kOverhead, kPrefill, kDecode };
/// The bounds' names in StepBound's order (the catalogue exports them as `bounds`).
inline constexpr const char* kStepBoundNames[] = {"overhead", "prefill", "decode"};
inline const char* step_bound_name(StepBound bound) { return enum_entry(kStepBoundNames, bound, "overhead"); }

/// One GEMM of the step, its full (unsharded) shape and how its time was found.
struct GemmTerm {
  double m = 0, k = 0, n = 0;
  double flops = 0;  ///< 2*m*k*n for one layer
  double mfu = 0;
  double compute_s = 0;       ///< flops / (peak * mfu), one layer, unsharded
  double floor_s = 0;         ///< weight load k*n*bpp / bandwidth, one layer, unsharded
  double time_s = 0;          ///< max(compute, floor) * L / tp: its share of the phase
  double kernel_floor_s = 0;  ///< corrected gemm_roofline: measured FP8 kernel time, one layer, unsharded
  bool floor_won = false;
  GemmLookup lookup;
};

/// gemmTimes(m): all seven GEMMs for m tokens.
struct GemmSet {
  double m = 0;
  std::array<GemmTerm, kNumGemmKinds> terms;
  double total_s = 0;  ///< (sum of per-layer times) / tp * L, as the reference sums it
};

/// Bytes moved per GPU in one phase (already divided by tp).
struct MemoryBytes {
  double weights = 0;
  double kv_read = 0;   ///< cached KV read ("access")
  double kv_write = 0;  ///< new KV written ("growth")
  double activations = 0;
};

struct PrefillBucket {
  int64_t bucket = 0;
  int64_t num_requests = 0;
  int64_t total_new_tokens = 0;
  double attn_mfu = 0;
  double attn_core_flops = 0;
  double attn_core_time_s = 0;
  PrefillLookup attn_lookup;
  GemmSet gemms;
};

/// Decode attention lookups grouped by KV length (one entry per distinct length).
struct DecodeAttnGroup {
  int64_t kv_len = 0;
  int64_t count = 0;
  DecodeLookup lookup;
};

struct PhaseResult {
  bool present = false;
  double compute_s = 0;
  double memory_s = 0;
  /// max(compute, memory) plus communication (0 in blis-v2, so adding it is exact).
  double time_s() const { return (compute_s > memory_s ? compute_s : memory_s) + comm_s; }
  bool memory_bound() const { return memory_s > compute_s; }
  double gemm_time_s = 0;
  double attn_core_time_s = 0;
  double attn_core_flops = 0;
  double comm_s = 0;  ///< corrected mode: tensor-parallel all-reduce time
  MemoryBytes bytes;
};

struct PrefillResult : PhaseResult {
  int64_t num_requests = 0;
  int64_t new_tokens = 0;
  std::vector<PrefillBucket> buckets;  ///< ascending bucket order
};

struct DecodeResult : PhaseResult {
  int64_t batch_size = 0;
  double attn_effective_mfu = 0;
  GemmSet gemms;
  std::vector<DecodeAttnGroup> attn_groups;  ///< sorted by kv_len
};

/// Corrected `fused_mixed_batch`: a step with both phases as ONE forward pass, GEMMs
/// over all its tokens, both attentions, one weight read.
struct FusedPass : PhaseResult {
  double tokens = 0;
  GemmSet gemms;
};

struct StepResult {
  Mode mode = kDefaultMode;
  CorrectedSettings corrected;  ///< the switches and parameters used (all off in blis-v2)
  FusedPass fused;
  int64_t step_time_us = 0;
  double total_us_before_rounding = 0;
  bool min_step_floor_applied = false;
  double step_hardware_s = 0;
  double overhead_us = 0;
  StepBound bound = StepBound::kOverhead;
  PrefillResult prefill;
  DecodeResult decode;
  std::string attn_config_model;   ///< "H-Hkv-D" of the model
  std::string attn_config_used;    ///< the measured config actually used
  int64_t decode_mfu_tp_used = 0;  ///< TP of the decode table for this config and tp
  std::vector<Warning> warnings;
};

}  // namespace stepcalc
