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
  uint8_t code;                   ///< the enum value it selects (WeightFormat, KvCacheDtype)
  const char* missing = nullptr;  ///< non-null: the core cannot price it yet; what it lacks (error `unsupported`)
};

/// `quantization`: the format the weights run in. "none" keeps the checkpoint's own; a
/// format quantises every linear layer to it, unless the checkpoint already is of that
/// format (then its own modules and scaling stand). Whether the GPU's tables measure the
/// format is checked when pricing (error `unsupported`, never priced as another precision).
inline constexpr RequestChoice kQuantizationChoices[] = {{"none", static_cast<uint8_t>(WeightFormat::kBf16)},
                                                         {"fp8", static_cast<uint8_t>(WeightFormat::kFp8)},
                                                         {"nvfp4", static_cast<uint8_t>(WeightFormat::kNvfp4)},
                                                         {"mxfp4", static_cast<uint8_t>(WeightFormat::kMxfp4)},
                                                         {"int4", static_cast<uint8_t>(WeightFormat::kInt4)}};

/// `kv_cache_dtype` as vLLM names it: "auto" (the checkpoint's: FP8 when its quantization
/// config says kv_cache_quant_algo FP8, else 16-bit), 16-bit, or an FP8 format.
inline constexpr RequestChoice kKvCacheDtypeChoices[] = {
    {"auto", static_cast<uint8_t>(KvCacheDtype::kAuto)},     {"bf16", static_cast<uint8_t>(KvCacheDtype::kBf16)},
    {"bfloat16", static_cast<uint8_t>(KvCacheDtype::kBf16)}, {"fp8", static_cast<uint8_t>(KvCacheDtype::kFp8)},
    {"fp8_e4m3", static_cast<uint8_t>(KvCacheDtype::kFp8)},  {"fp8_e5m2", static_cast<uint8_t>(KvCacheDtype::kFp8)}};

/// Parses a document. A document-level failure (malformed JSON, too large, not an
/// object or array) is the outer error; a bad element of an array is its own error
/// with a path starting "[i]".
/// `mode_override` (if non-empty) replaces every request's mode before the mode-
/// dependent checks (the measured mode accepts any GPU with measured kernels).
Expected<RequestBatch> parse_requests(std::string_view json, const std::string& mode_override = "");

/// Parses a document that must hold exactly one request object.
Expected<Request> parse_request(std::string_view json);

}  // namespace stepcalc
