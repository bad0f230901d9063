// SPDX-License-Identifier: Apache-2.0
// The "corrected" mode's switches and parameters as one table each: name, one-line
// description, and for parameters unit, default and accepted range
// (docs/CORRECTED-MODE.md). Plain data only: the request carries a
// CorrectedOverrides, the pricing a resolved CorrectedSettings; the catalogue, the
// request reader and the result writer all read these tables.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/input_limits.h"

namespace stepcalc {

/// One switch per documented weakness of the reference (known-weaknesses.md).
enum CorrectedSwitch {
  kDecodeHarmonicMean,      ///< decode attention: sum of per-request times (#1)
  kDecodeAttentionLatency,  ///< decode attention from measured latency_us (#2, #3)
  kPrefillAttentionLength,  ///< prefill attention at the request's own length (#4)
  kGemmRoofline,            ///< GEMM: tensor-core / HBM / measured-kernel roofline (#5, #6)
  kTpAllreduce,             ///< two all-reduces per layer over NVLink (#7)
  kCpuOverhead,             ///< per-step + per-request CPU cost instead of 100 us/layer (#7)
  kFusedMixedBatch,         ///< a mixed step is one forward pass over all tokens (#8)
  kNumCorrectedSwitches
};

/// The few parameters; every name carries its unit.
enum CorrectedParam {
  kGemmTablePeakTflops,  ///< peak the GEMM table's MFU is relative to (H100 FP8 dense), TFLOP/s
  kAllreduceLatencyUs,   ///< fixed time of one small all-reduce inside a CUDA graph, us
  kNvlinkBwGBs,          ///< NVLink bandwidth per GPU per direction, GB/s
  kCpuStepUs,            ///< CPU time per engine step (schedule, prepare, sample), us
  kCpuPerRequestUs,      ///< extra CPU time per request in the step, us
  kNumCorrectedParams
};

struct CorrectedSwitchInfo {
  const char* name;
  const char* description;  ///< one line for people
};

/// A parameter: its value must lie in [min, max] (finite; both inclusive).
struct CorrectedParamInfo {
  const char* name;
  const char* unit;
  double default_value;
  double min;
  double max;
  const char* description;  ///< one line for people, with the default's origin
};

inline constexpr CorrectedSwitchInfo kCorrectedSwitchInfo[kNumCorrectedSwitches] = {
    {"decode_harmonic_mean",
     "Decode attention time is the sum of each request's own time, not total FLOPs at an arithmetic-mean MFU."},
    {"decode_attention_latency",
     "Decode attention from the measured kernel latency instead of MFU rounded to 3 decimals."},
    {"prefill_attention_length", "Prefill attention at each request's own length, not at a power-of-two bucket."},
    {"gemm_roofline", "GEMM MFU is relative to the FP8 peak the table was measured at; priced as a roofline."},
    {"tp_allreduce", "Adds the two NVLink all-reduces per layer that tensor parallelism needs."},
    {"cpu_overhead", "CPU cost per step and per request instead of 100 us per layer."},
    {"fused_mixed_batch", "A mixed step is one forward pass over all tokens, not max(prefill, decode)."},
};

/// Defaults. 1979: H100 SXM FP8 dense TFLOP/s (datasheet 3,958 with sparsity).
/// 5 us: small-message custom all-reduce on H100 NVLink (public microbenchmarks,
/// 3.7-9 us; CUDA graphs remove the launch). 450 GB/s: NVLink 4, 900 GB/s
/// bidirectional per H100. 1700 us and 14 us: FITTED on the Llama-2-70B TP4
/// calibration steps (docs/ACCURACY.md), the only fitted values. Ranges: those of
/// the hardware constants (input_limits.h) in the parameter's unit.
inline constexpr CorrectedParamInfo kCorrectedParamInfo[kNumCorrectedParams] = {
    {"gemm_table_peak_tflops", "TFLOP/s", 1979.0, limits::kMinTflopsPeak, limits::kMaxTflopsPeak,
     "Peak the GEMM table's MFU is relative to: H100 SXM FP8 dense (datasheet)."},
    {"allreduce_latency_us", "us", 5.0, 0, limits::kMaxPerLayerOverheadUs,
     "Fixed time of one small all-reduce inside a CUDA graph (public H100 NVLink measurements)."},
    {"nvlink_bw_gbs", "GB/s", 450.0, limits::kMinBwPeakTBs * 1000, limits::kMaxBwPeakTBs * 1000,
     "NVLink bandwidth per GPU per direction: NVLink 4, 900 GB/s bidirectional per H100 (datasheet)."},
    {"cpu_step_us", "us", 1700.0, 0, limits::kMaxPerLayerOverheadUs,
     "CPU time per engine step (schedule, prepare, sample); fitted on data/calibration."},
    {"cpu_per_request_us", "us", 14.0, 0, limits::kMaxPerLayerOverheadUs,
     "Extra CPU time per request in the step; fitted on data/calibration."},
};

inline const char* corrected_switch_name(int s) {
  return s >= 0 && s < kNumCorrectedSwitches ? kCorrectedSwitchInfo[s].name : "?";
}

inline const char* corrected_param_name(int p) {
  return p >= 0 && p < kNumCorrectedParams ? kCorrectedParamInfo[p].name : "?";
}

inline int corrected_switch_index(std::string_view name) {
  for (int s = 0; s < kNumCorrectedSwitches; ++s)
    if (name == kCorrectedSwitchInfo[s].name) return s;
  return -1;
}

inline int corrected_param_index(std::string_view name) {
  for (int p = 0; p < kNumCorrectedParams; ++p)
    if (name == kCorrectedParamInfo[p].name) return p;
  return -1;
}

/// What a request asks for on top of its mode: a switch state -1 (mode default),
/// 0 (off) or 1 (on), and parameter values where `param_set` (already range-checked
/// by the request reader, io/mode_json).
struct CorrectedOverrides {
  bool present = false;
  std::array<int8_t, kNumCorrectedSwitches> switch_state = {-1, -1, -1, -1, -1, -1, -1};
  std::array<double, kNumCorrectedParams> param = {};
  std::array<bool, kNumCorrectedParams> param_set = {};
};

/// The parameters' defaults, from kCorrectedParamInfo.
constexpr std::array<double, kNumCorrectedParams> corrected_param_defaults() {
  std::array<double, kNumCorrectedParams> out = {};
  for (int p = 0; p < kNumCorrectedParams; ++p) out[p] = kCorrectedParamInfo[p].default_value;
  return out;
}

/// The resolved switches and parameters of one pricing. All off is "blis-v2".
struct CorrectedSettings {
  std::array<bool, kNumCorrectedSwitches> on = {};
  std::array<double, kNumCorrectedParams> param = corrected_param_defaults();
  bool listed = false;  ///< report the settings in the result (mode "corrected" or overrides given)
  bool any() const {
    for (bool b : on)
      if (b) return true;
    return false;
  }
  bool has(CorrectedSwitch s) const { return on[s]; }
  double get(CorrectedParam p) const { return param[p]; }
};

}  // namespace stepcalc
