// The calculator's front door: JSON text in, JSON text out. The CLI and the Wasm
// bindings are thin shells over these functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "kernels/kernel_registry.h"

namespace stepcalc {

/// Result of pricing a document of one request or an array of them.
struct PricedDocument {
  std::string json;  ///< result object, or array of result/error objects in order
  int failures = 0;  ///< elements that were errors
};

/// Prices every request of `json`. `mode_override` (if non-empty) replaces each
/// request's mode. A document-level failure is the error.
Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override = "");
/// The same with measured kernel tables: requests whose mode needs them get the
/// database of their "gpu" and "kernels" from `kernels` (docs/KERNELS.md).
Expected<PricedDocument> price_document(std::string_view json, const std::string& mode_override,
                                        const KernelRegistry& kernels);

/// Prices exactly one request object; its result JSON or its error.
Expected<std::string> price_json(std::string_view json);
Expected<std::string> price_json(std::string_view json, const KernelRegistry& kernels);

/// Sweep axes: "prefill_tokens" (new tokens of the first prefill request; one with
/// no prefix is added if there is none), "decode_batch" (number of decode requests,
/// the existing ones repeated in order; KV 1024 when there are none), "decode_kv"
/// (every decode request's KV length; one is added if there is none), "tp".
/// Returns a JSON array of {value, step_time_us, total_us, bound, prefill_s,
/// decode_s} or {value, error} per point.
Expected<std::string> sweep_json(std::string_view request_json, const std::string& axis,
                                 const std::vector<double>& values);
Expected<std::string> sweep_json(std::string_view request_json, const std::string& axis,
                                 const std::vector<double>& values, const KernelRegistry& kernels);

/// {"models": [...], "gpus": [{name, TFlopsPeak, ...}], "modes": [...]}
std::string presets_json();

/// Library version (CMake project version).
const char* version();

}  // namespace stepcalc
