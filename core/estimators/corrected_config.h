// The names, defaults and plain-data settings of the "corrected" mode's switches
// and parameters (docs/CORRECTED-MODE.md). Plain data only: the request carries a
// CorrectedOverrides, the pricing a resolved CorrectedSettings.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

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

inline const char* corrected_switch_name(int s) {
  static const char* const kNames[kNumCorrectedSwitches] = {
      "decode_harmonic_mean", "decode_attention_latency", "prefill_attention_length", "gemm_roofline", "tp_allreduce",
      "cpu_overhead",         "fused_mixed_batch"};
  return s >= 0 && s < kNumCorrectedSwitches ? kNames[s] : "?";
}

inline const char* corrected_param_name(int p) {
  static const char* const kNames[kNumCorrectedParams] = {"gemm_table_peak_tflops", "allreduce_latency_us",
                                                          "nvlink_bw_gbs", "cpu_step_us", "cpu_per_request_us"};
  return p >= 0 && p < kNumCorrectedParams ? kNames[p] : "?";
}

/// Defaults. 1979: H100 SXM FP8 dense TFLOP/s (datasheet 3,958 with sparsity).
/// 5 us: small-message custom all-reduce on H100 NVLink (public microbenchmarks,
/// 3.7-9 us; CUDA graphs remove the launch). 450 GB/s: NVLink 4, 900 GB/s
/// bidirectional per H100. 1700 us and 14 us: FITTED on the Llama-2-70B TP4
/// calibration steps (docs/ACCURACY.md), the only fitted values.
inline double corrected_param_default(int p) {
  static const double kDefaults[kNumCorrectedParams] = {1979.0, 5.0, 450.0, 1700.0, 14.0};
  return p >= 0 && p < kNumCorrectedParams ? kDefaults[p] : 0.0;
}

inline int corrected_switch_index(std::string_view name) {
  for (int s = 0; s < kNumCorrectedSwitches; ++s)
    if (name == corrected_switch_name(s)) return s;
  return -1;
}

inline int corrected_param_index(std::string_view name) {
  for (int p = 0; p < kNumCorrectedParams; ++p)
    if (name == corrected_param_name(p)) return p;
  return -1;
}

/// What a request asks for on top of its mode: a switch state -1 (mode default),
/// 0 (off) or 1 (on), and parameter values where `param_set`.
struct CorrectedOverrides {
  bool present = false;
  std::array<int8_t, kNumCorrectedSwitches> switch_state = {-1, -1, -1, -1, -1, -1, -1};
  std::array<double, kNumCorrectedParams> param = {};
  std::array<bool, kNumCorrectedParams> param_set = {};
};

/// The resolved switches and parameters of one pricing. All off is "blis-v2".
struct CorrectedSettings {
  std::array<bool, kNumCorrectedSwitches> on = {};
  std::array<double, kNumCorrectedParams> param = {1979.0, 5.0, 450.0, 1700.0, 14.0};
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
