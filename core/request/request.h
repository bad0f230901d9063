// SPDX-License-Identifier: Apache-2.0
// The API's input, validated: which model, GPU and layout, which mode, the step to
// price, and for serving the workload and engine settings. Plain data; io/ fills it
// from JSON, every layer above reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "request/corrected_config.h"
#include "request/modes.h"
#include "request/workload.h"

namespace stepcalc {

/// GPU constants. `bw_efficiency` 0 means "none" (peak bandwidth used as is).
struct Hardware {
  std::string gpu = "H100";            ///< selects the MFU tables
  double tflops_peak = 989.5;          ///< TFlopsPeak, dense BF16 TFLOP/s
  double bw_peak_tbs = 3.35;           ///< BwPeakTBs, HBM TB/s
  double bw_efficiency = 0.82;         ///< bwEfficiencyFactor, 0 or (0, 1]
  double per_layer_overhead_us = 100;  ///< perLayerOverhead, CPU us per layer (/tp)
};

/// A request being prefilled: `progress_index` tokens already processed (cached
/// prefix or earlier chunks), `new_tokens` processed in this step.
struct PrefillRequest {
  int64_t progress_index = 0;
  int64_t new_tokens = 0;
};

/// A request decoding one token; `progress_index` tokens are in its KV cache.
/// `new_tokens` is carried for round trips; the reference ignores it.
struct DecodeRequest {
  int64_t progress_index = 0;
  int64_t new_tokens = 1;
};

struct Step {
  std::vector<PrefillRequest> prefill;
  std::vector<DecodeRequest> decode;
};

/// How much of a pricing to produce: `kSummary` the step and phase times, the bound
/// and the warning codes (docs/RESULT.md, "Summary detail"); `kFull` everything.
enum class Detail { kSummary, kFull };

/// Everything one pricing needs, already validated.
struct Request {
  std::string id;  ///< echoed in the result when non-empty
  bool has_id = false;
  Mode mode = kDefaultMode;
  std::string model_name;  ///< informational label
  ModelShape model;
  Hardware hardware;
  int64_t tp = 1;
  int64_t ep = 1;  ///< `ep`: expert-parallel size of the MoE layers (priced in measured only)
  int64_t dp = 1;  ///< `dp`: attention data-parallel ranks (priced in measured only)
  Step step;
  CorrectedOverrides corrected;  ///< optional `corrected` object: switch/param overrides
  /// `quantization`: the format every linear layer runs in (kBf16: the checkpoint's own).
  WeightFormat quantization = WeightFormat::kBf16;
  KvCacheDtype kv_cache = KvCacheDtype::kAuto;  ///< `kv_cache_dtype`
  std::string kernels;                          ///< `"kernels"`: measured table version ("" = the GPU's default)
  EngineSettings engine;                        ///< `engine`: vLLM settings for memory and serving (0: vLLM's default)
  bool has_step = true;                         ///< false: a serving request without a step (price refuses it)
  Workload workload;                            ///< `workload`: what a serving estimate simulates (`serve` only)
  bool has_workload = false;
  double gpu_hour_usd = 0;        ///< `gpu_hour_usd`: price of one GPU-hour for serving costs (0: none)
  Detail detail = Detail::kFull;  ///< `"detail": "summary"`: the result at summary detail
  bool has_expected = false;      ///< conformance files: the reference's answer
  int64_t expected_step_time_us = 0;
};

}  // namespace stepcalc
