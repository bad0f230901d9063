// SPDX-License-Identifier: Apache-2.0
// JSON in: the request format (the conformance-case format) -> validated Requests.
// The parts of a request are read by their own files: io/model_config (model),
// io/hardware_json (gpu, hardware), io/step_json (step), io/mode_json (corrected).
#pragma once

#include <string_view>
#include <vector>

#include "base/error.h"
#include "io/hardware_json.h"
#include "io/model_config.h"
#include "request/request.h"

namespace stepcalc {

/// One JSON document: a request object, or an array of them.
struct RequestBatch {
  bool is_array = false;
  std::vector<Expected<Request>> requests;  ///< in document order; each may be an error
};

/// Every top-level field a request may carry (docs/INPUT.md), in the order the
/// unknown_field message lists them.
const std::vector<const char*>& request_fields();

/// A named value of a request field and what it means.
struct RequestChoice {
  const char* value;
  bool fp8;                       ///< whether the value selects FP8
  const char* missing = nullptr;  ///< non-null: the core cannot price it yet; what it lacks (error `unsupported`)
};

/// `quantization`: "fp8" runs the weights in FP8, "none" keeps the checkpoint's own. The
/// 4-bit formats are named so a request can say what it runs, and refused until the
/// kernel tables measure them (never priced as another precision).
inline constexpr RequestChoice kQuantizationChoices[] = {
    {"none", false},
    {"fp8", true},
    {"nvfp4", false, "no NVFP4 GEMM or fused-MoE kernels are in the measured tables"},
    {"mxfp4", false, "no MXFP4 GEMM or fused-MoE kernels are in the measured tables"},
    {"int4", false, "no INT4 (weight-only) GEMM or fused-MoE kernels are in the measured tables"}};

/// `kv_cache_dtype` as vLLM names it: "auto" (the model's dtype) or an FP8 format.
inline constexpr RequestChoice kKvCacheDtypeChoices[] = {{"auto", false}, {"bf16", false},    {"bfloat16", false},
                                                         {"fp8", true},   {"fp8_e4m3", true}, {"fp8_e5m2", true}};

/// Parses a document. A document-level failure (malformed JSON, too large, not an
/// object or array) is the outer error; a bad element of an array is its own error
/// with a path starting "[i]".
/// `mode_override` (if non-empty) replaces every request's mode before the mode-
/// dependent checks (the measured mode accepts any GPU with measured kernels).
Expected<RequestBatch> parse_requests(std::string_view json, const std::string& mode_override = "");

/// Parses a document that must hold exactly one request object.
Expected<Request> parse_request(std::string_view json);

}  // namespace stepcalc
