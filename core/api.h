// The calculator's front door: JSON text in, JSON text out. The CLI and the Wasm
// bindings are thin shells over these functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "kernels/kernel_registry.h"

namespace stepcalc {

/// Result of pricing a document of one request or an array of them.
struct PricedDocument {
  std::string json;                ///< result object, or array of result/error objects in order
  int failures = 0;                ///< elements that were errors
  Error first_failure;             ///< the first of them (for a one-line message), when failures > 0
  size_t first_failure_index = 0;  ///< its position in an array document
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

/// KV length of the decode request a decode_batch sweep repeats when the step has none.
constexpr int64_t kSweepDefaultDecodeKv = 1024;

/// One axis a sweep may vary; values must be whole numbers in [min, max].
struct SweepAxis {
  const char* name;
  const char* unit;
  int64_t min;
  int64_t max;
};

/// The sweep axes: prefill_tokens (new tokens of the first prefill request; one with no
/// prefix is added if the step has none), decode_batch (the step's decodes repeated in
/// order; kSweepDefaultDecodeKv when it has none), decode_kv (every decode's KV length;
/// one is added if there is none), tp.
const std::vector<SweepAxis>& sweep_axes();

/// Prices the request once per value along `axis` (one of sweep_axes()). Returns a
/// JSON array of {value, step_time_us, total_us, bound, prefill_s, decode_s} or
/// {value, error} per point.
Expected<std::string> sweep_json(std::string_view request_json, const std::string& axis,
                                 const std::vector<double>& values);
Expected<std::string> sweep_json(std::string_view request_json, const std::string& axis,
                                 const std::vector<double>& values, const KernelRegistry& kernels);

/// Called during a serving estimate with the share of requests finished (0..1);
/// returning false cancels it (error "cancelled").
using ServeProgress = std::function<bool(double finished_share)>;

/// Serving estimate (docs/SERVING.md) of every request of `json`: one request
/// object with a `workload` (its error is the error), or an array of them (each
/// result or error in order). `mode_override` as for price_document; `kernels`
/// supplies the measured tables when a request's mode needs them.
Expected<PricedDocument> serve_document(std::string_view json, const std::string& mode_override = "",
                                        const KernelRegistry& kernels = no_kernels(),
                                        const ServeProgress& progress = nullptr);

/// The serving estimate of exactly one request object.
Expected<std::string> serve_json(std::string_view json, const KernelRegistry& kernels = no_kernels(),
                                 const ServeProgress& progress = nullptr);

/// {"models": [...], "gpus": [{name, TFlopsPeak, ...}], "modes": [...]}
std::string presets_json();

/// A request's `model` value (JSON text of a preset name or a config object) resolved
/// without pricing anything: {preset, source, shape fields, head_dim, torch_dtype,
/// notes: [{code, message}]}; errors have paths from "model".
Expected<std::string> resolve_model_json(std::string_view model_json);

/// Library version (CMake project version).
const char* version();

}  // namespace stepcalc
